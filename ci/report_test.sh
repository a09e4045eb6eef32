#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bazel entry point of ci/report_test.py (the tests of the test report's counters).
set -euo pipefail
exec python3 ci/report_test.py
