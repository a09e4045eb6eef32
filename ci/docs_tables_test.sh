#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bazel entry point of ci/docs_tables_test.py (the docs' hand-written tables against the code,
# the binaries' --help, the cited tests' cases and the bench reports under docs/bench/).
set -euo pipefail
exec python3 ci/docs_tables_test.py .
