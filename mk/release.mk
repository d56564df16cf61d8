# Release discipline targets (lint, format, dist): see issue 8.
