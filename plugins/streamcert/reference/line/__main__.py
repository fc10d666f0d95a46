"""`python -m streamcert.reference.line`: runs renderer.py's main."""

from .renderer import main

raise SystemExit(main())
