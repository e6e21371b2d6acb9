"""The web app's front door (also Hugging Face Spaces' app_file): settings -> plugins -> build_app().launch().

On a fresh machine with no API key it opens on the bundled demo corpus with the offline backend.
Bind address and port: MADQA_HOST / MADQA_PORT (GRADIO_SERVER_PORT is honoured too).
"""

import os
import sys

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main() -> int:
    from madqa.errors import MadqaError
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings
    from madqa.ui import build_app, launch_options

    try:
        settings = Settings.from_env()
        registry = collect(get_plugin_manager(settings.plugins_dir))
        app = build_app(settings, registry)
    except MadqaError as exc:
        print(f"madqa: {exc}", file=sys.stderr)
        return 2
    app.launch(**launch_options(settings, app))
    return 0


if __name__ == "__main__":
    sys.exit(main())
