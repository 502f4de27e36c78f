"""Layer 3: releases built on the exact samplers, each with its privacy map."""
