#!/bin/sh
# Secrets arrive as files (compose `secrets:`, Kubernetes secret volumes), never as image layers or
# compose values: export each one that is mounted as the env var Dagster / lexpipe read, then run
# the service's command.
set -eu
secrets="${SECRETS_DIR:-/run/secrets}"
for pair in pg_password:DAGSTER_PG_PASSWORD es_api_key:LEXPIPE_ES_API_KEY; do
  file="$secrets/${pair%%:*}"
  if [ -s "$file" ]; then  # present and not empty (an empty placeholder sets nothing)
    export "${pair#*:}=$(cat "$file")"
  fi
done
exec "$@"
