"""The in-memory engine on Polars: per-person bounding (:mod:`.bounding`) and the engine (:mod:`.engine`)."""
