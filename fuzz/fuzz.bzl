# SPDX-License-Identifier: BSD-3-Clause
"""nvmf_fuzzer: one libFuzzer target plus a replay test of its seed corpus.

With --config=fuzz (clang, see .bazelrc) `name` links libFuzzer's main (-fsanitize=fuzzer).
Otherwise it links replay_main.cc: the binary runs LLVMFuzzerTestOneInput once on every file or
directory it is given, so `bazel test //fuzz/...` replays every seed with the default compiler.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_test")

def nvmf_fuzzer(name, srcs, deps, corpus):
    """`corpus`: the seed directory under fuzz/corpus/."""
    corpus_dir = native.package_name() + "/corpus/" + corpus
    cc_binary(
        name = name,
        srcs = srcs + select({
            "//fuzz:fuzzing": [],
            "//conditions:default": ["//fuzz:replay_main.cc"],
        }),
        linkopts = select({
            "//fuzz:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = deps,
    )

    # Every seed, run once: the regression inputs of fixed bugs stay fixed.
    cc_test(
        name = name + "_replay_test",
        size = "small",
        srcs = srcs + ["//fuzz:replay_main.cc"],
        args = [corpus_dir],
        data = native.glob(["corpus/%s/**" % corpus]),
        deps = deps,
    )
