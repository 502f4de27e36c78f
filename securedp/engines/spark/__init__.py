"""The Spark engine: units and checks (:mod:`.functions`), bounding (:mod:`.bounding`), the engine (:mod:`.engine`).

The functions are re-exported here, where they lived before the engine had its own folder.
"""

from securedp.engines.spark.bounding import bound_and_aggregate as bound_and_aggregate
from securedp.engines.spark.bounding import count_units as count_units
from securedp.engines.spark.bounding import key_aggregates as key_aggregates
from securedp.engines.spark.functions import UnitSpec as UnitSpec
from securedp.engines.spark.functions import check_cells as check_cells
from securedp.engines.spark.functions import check_session as check_session
from securedp.engines.spark.functions import is_spark_frame as is_spark_frame
from securedp.engines.spark.functions import key_cells as key_cells
from securedp.engines.spark.functions import lattice_units as lattice_units
from securedp.engines.spark.functions import require_pyspark as require_pyspark
from securedp.engines.spark.functions import units_column as units_column
