#!/bin/sh
echo "bazel coverage is not available offline; build with --copt=--coverage and run gcovr" >&2
exit 1
