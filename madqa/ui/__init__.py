"""The Gradio web app: ``build_app(settings, registry)`` builds it, ``launch_options`` says how to serve it.

One module per tab (ask, compare, corpus, evaluate, plugins); ``messages`` turns agent steps into
chat messages with plain, tested functions; ``sessions`` keeps each visitor's uploads apart.
"""

from madqa.ui.build import build_app, launch_options

__all__ = ["build_app", "launch_options"]
