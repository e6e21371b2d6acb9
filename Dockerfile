# madqa web app for Hugging Face Spaces (docker SDK, app_port 7860) or any container host.
#   docker build -t madqa . && docker run -p 7860:7860 -e OPENAI_API_KEY madqa
# Installs through scripts/install, the same steps CI runs. API keys come from the environment
# (Space secrets), never from the image. State (indexes, page cache, uploads) goes to MADQA_HOME:
# /data/madqa when persistent storage is mounted at /data, else /home/user/.cache/madqa.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DEBIAN_FRONTEND=noninteractive

# Spaces run the container as uid 1000.
RUN useradd --create-home --uid 1000 user
WORKDIR /home/user/app

# Dependencies first (a layer that survives code changes): Tesseract via apt as root, then .venv.
COPY scripts/install scripts/install
COPY requirements.txt ./
RUN scripts/install \
    && rm -rf /var/lib/apt/lists/* /root/.cache \
    && chown -R user:user /home/user

COPY --chown=user:user . .
RUN .venv/bin/python -m pip install -q --no-deps -e . && chown -R user:user .venv

USER user
ENV HOME=/home/user \
    PATH=/home/user/app/.venv/bin:$PATH \
    MADQA_HOST=0.0.0.0 \
    MADQA_PORT=7860 \
    MADQA_CONFIG=offline \
    GRADIO_ANALYTICS_ENABLED=False \
    GRADIO_RUN_HISTORY=False \
    LITELLM_LOCAL_MODEL_COST_MAP=True
EXPOSE 7860

# MADQA_HOME: as set by the host, else persistent storage when /data is writable, else the home cache.
CMD ["/bin/sh", "-c", "if [ -z \"$MADQA_HOME\" ]; then if [ -d /data ] && [ -w /data ]; then export MADQA_HOME=/data/madqa; else export MADQA_HOME=/home/user/.cache/madqa; fi; fi; mkdir -p \"$MADQA_HOME\" && exec python app.py"]
