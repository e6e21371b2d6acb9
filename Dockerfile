# madqa web app for Hugging Face Spaces (docker SDK, app_port 7860) or any container host.
#   docker build -t madqa . && docker run -p 7860:7860 -e OPENAI_API_KEY madqa
#   docker build --build-arg INSTALL_FLAGS=--optional -t madqa .   # also dense/hybrid retrieval and Milvus
# Installs through scripts/install, the same steps CI runs. API keys come from the environment
# (Space secrets), never from the image. State (indexes, page cache, uploads, temp files) goes to
# MADQA_HOME: /data/madqa when persistent storage is writable at /data, else the home cache
# (scripts/container-start). docs/space.md: what a Space owner sets, and scripts/space-check's figures.
# Your own PDFs for every visitor: collections/NAME/ in the image or /data/NAME on persistent storage, named by
# the Space variable MADQA_COLLECTIONS=NAME=DIR (docs/space.md, "Serving your own collection").
# BASE_IMAGE: any Debian bookworm with python3 and python3-venv (scripts/space-check builds from one
# made with mmdebstrap, without Docker Hub).
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

# scripts/install's flags: --optional adds dense/hybrid retrieval and Milvus (requirements-optional.txt).
ARG INSTALL_FLAGS=""

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Spaces run the container as uid 1000. The app folder is made for that user here, so nothing
# installed later needs a chown (a recursive chown copies every file it touches into a new layer).
RUN useradd --create-home --uid 1000 user && install -d -o user -g user /home/user/app
WORKDIR /home/user/app

# System packages as root: Tesseract (scripts/install --system) and tini, an init that forwards the
# stop signal to the app (Python as PID 1 would ignore SIGTERM) and reaps the PDF worker processes.
# apt's package lists and downloaded .debs go in the same layer (/var/cache/apt kept 107 MB in the image).
COPY scripts/install scripts/install
RUN DEBIAN_FRONTEND=noninteractive apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tini >/dev/null \
    && scripts/install --system ${INSTALL_FLAGS} \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /root/.cache scripts

# Python packages as the app's user, in one layer with their bytecode (compiled here, not at every
# start). Gradio writes a random hash_seed.txt next to its own code at first import: it is pointed at
# /tmp so the virtualenv stays unwritten at run time (without a writable /tmp Gradio uses a fresh seed
# per process, which is all the seed is for).
USER user
ENV HOME=/home/user \
    PATH=/home/user/app/.venv/bin:$PATH
COPY --chown=user:user scripts/install scripts/install
COPY --chown=user:user requirements.txt requirements-optional.txt ./
RUN scripts/install ${INSTALL_FLAGS} \
    && seed="$(.venv/bin/python -c 'import importlib.util as u, os; print(os.path.join(os.path.dirname(u.find_spec("gradio").origin), "hash_seed.txt"))')" \
    && rm -f "$seed" && ln -s /tmp/gradio-hash-seed.txt "$seed" \
    && { .venv/bin/python -m compileall -q -j 0 .venv/lib > /tmp/compileall.log 2>&1 \
         || echo "compileall: $(grep -c 'Error' /tmp/compileall.log) files of other Python versions or templates left as source"; } \
    && rm -rf /tmp/compileall.log /home/user/.cache

# The code (.dockerignore leaves out tests, benchmarks, docs and everything not needed to serve).
COPY --chown=user:user . .
RUN .venv/bin/python -m pip install -q --no-deps -e . \
    && .venv/bin/python -m compileall -q app.py madqa madqa_plugins \
    && rm -rf /home/user/.cache

# MADQA_PROXY_HOPS: Hugging Face does not document what its proxy puts in X-Forwarded-For, so the image
# keeps 0 (every request counted by the proxy's address); docs/space.md says how to set it for a Space.
ENV MADQA_HOST=0.0.0.0 \
    MADQA_PORT=7860 \
    MADQA_CONFIG=offline \
    MADQA_PROXY_HOPS=0 \
    GRADIO_ANALYTICS_ENABLED=False \
    GRADIO_RUN_HISTORY=False \
    LITELLM_LOCAL_MODEL_COST_MAP=True
EXPOSE 7860

# SIGTERM (every runtime's default, named here) goes through tini to the app, which stops gracefully.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["scripts/container-start"]
