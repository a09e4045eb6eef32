"""A repository rule exposing selected /usr/include directories of Debian -dev packages."""

def _system_include_repository_impl(ctx):
    for d in ctx.attr.include_dirs:
        src = ctx.path(ctx.attr.include_root + "/" + d)
        if not src.exists:
            fail("%s is missing: run scripts/setup.sh to install the Debian -dev packages" % src)
        ctx.symlink(src, "include/" + d)
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")

system_include_repository = repository_rule(
    implementation = _system_include_repository_impl,
    attrs = {
        "build_file": attr.label(mandatory = True, allow_single_file = True),
        "include_dirs": attr.string_list(mandatory = True),
        "include_root": attr.string(default = "/usr/include"),
    },
    local = True,
)
