"""``python3 -m irqres``: the same as the ``irqres`` command."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="irqres")
