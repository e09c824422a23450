#!/usr/bin/env bash
# Install what the app needs into .venv (once) and start it on http://localhost:8501 (offline default).
source "$(dirname "$0")/_venv.sh" requirements.txt
exec .venv/bin/python -m streamlit run app.py --server.port "${PORT:-8501}" "$@"
