# The trace reader's C extension (trace/_tracereader.c), for mypy: its functions and
# results are typed where they are used (trace/reader.py, trace/isolate.py).
from typing import Any

def __getattr__(name: str) -> Any: ...
