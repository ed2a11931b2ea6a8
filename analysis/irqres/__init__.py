"""irqres: SCHED_DEADLINE reservations for PREEMPT_RT IRQ threads.

The package holds the command-line client of irqresd, the trace analysis that measures
what an IRQ thread needs, and the adaptive threshold controller. Only irqresd changes
the kernel; this package reads traces and /proc, and talks to irqresd.
"""

__version__ = "0.1.0"
