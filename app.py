"""The web app's front door (also Hugging Face Spaces' app_file): settings -> plugins -> build_app().launch().

On a fresh machine with no API key it opens on the bundled demo corpus with the offline backend.
Bind address and port: MADQA_HOST / MADQA_PORT (GRADIO_SERVER_PORT is honoured too).

Serve your own PDFs: ``python app.py --corpus ~/papers`` (repeatable; ``NAME=DIR``, ``NAME=DIR:LANG``,
``NAME=DIR#QUESTIONS``; also ``MADQA_COLLECTIONS``), and ``--no-demo`` (``MADQA_DEMO=0``) to leave the demo corpus
out. A folder that is missing or cannot be read stops the start with exit status 2, naming it; so does a port that
another program holds.

SIGTERM (a container's stop or restart: the app is PID 1 there) and SIGINT stop it gracefully in a few seconds
(``madqa.ui.build.stop_app``), also while the demo corpus is being indexed: the next start indexes it again.
Before, only SIGINT was handled and every stop waited for the kill timeout (30 s, exit 137).
"""

import argparse
import logging
import os
import signal
import sys
import threading

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="app.py", description="The madqa web app (settings: MADQA_* variables).")
    parser.add_argument("--corpus", action="append", default=[], metavar="[NAME=]DIR[:LANG][#QUESTIONS]",
                        help="a folder of PDFs served to every visitor, indexed in the background (repeatable; "
                             "added to MADQA_COLLECTIONS)")
    parser.add_argument("--no-demo", action="store_true", help="leave the bundled demo corpus out (MADQA_DEMO=0)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from madqa.collections import served_collections
    from madqa.errors import MadqaError
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings
    from madqa.storage import state_line
    from madqa.ui import build_app, launch_options
    from madqa.ui.build import stop_app

    # the operator's log: madqa's own lines (refusals, start-up sweep, forwarded chains) at INFO, libraries' at WARNING
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("madqa").setLevel(logging.INFO)
    try:
        settings = Settings.from_env()
        print(state_line(settings.home), file=sys.stderr, flush=True)
        collections = served_collections(settings.collections, args.corpus)
        registry = collect(get_plugin_manager(settings.plugins_dir), settings)
        app = build_app(settings, registry, collections=collections, demo=settings.demo and not args.no_demo)
    except MadqaError as exc:
        print(f"madqa: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda number, frame: stop.set())
    try:
        app.launch(**launch_options(settings, app), prevent_thread_lock=True)
    except OSError as exc:  # Gradio's "Cannot find empty port", or an address not this machine's
        stop_app(app)
        why = f" ({exc.strerror})" if exc.strerror else ""  # Gradio's own text names its variables, not ours
        print(f"madqa: cannot listen on {settings.host}:{settings.port}{why}: the port is in use by another program, "
              "or the address is not this machine's; set MADQA_PORT (and MADQA_HOST) to a free one", file=sys.stderr)
        return 2
    while not stop.wait(0.5):  # a timed wait: the signal handler runs between waits, on this thread
        if not app.is_running:
            break
    print("madqa: stopping", file=sys.stderr, flush=True)
    stop_app(app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
