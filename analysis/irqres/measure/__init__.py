"""Measurements from traces: activations of IRQ threads (:mod:`.activations`), their
statistics (:mod:`.stats`) and the processes they served (:mod:`.accounting`)."""
