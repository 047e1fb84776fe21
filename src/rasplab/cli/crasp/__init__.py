"""``rasplab crasp ...``: the C-RASP command group, one module per subcommand.

``programs`` lists the library; ``show`` prints a program; ``run`` runs it on input strings;
``check`` compares it with a task's labels; ``compile`` and ``verify`` build and check its
transformer; ``table`` puts the expressibility predictions beside measured runs. PROGRAM is a
library name, ``FILE.py:NAME`` or ``FILE.json`` (:func:`rasplab.crasp.load.load_crasp_program`). The
subcommands are registered with the others in :mod:`rasplab.cli.commands`.
"""
