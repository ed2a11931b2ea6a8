"""Measurements from traces: activations of IRQ threads (:mod:`.activations`), their
statistics (:mod:`.stats`) and the processes they served (:mod:`.accounting`)."""

#: ``irqres analyze --exec``: the execution time the model uses (see :mod:`.charge`);
#: here so that the CLI can offer the choices without importing numpy
EXEC_SOURCES = ("auto", "kernel", "switch")
