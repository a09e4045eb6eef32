#!/usr/bin/env bash
# Runs every test: the unit tests under Bazel, then the soft-RoCE end-to-end suite under ci/rxe-run.
#
# Usage: scripts/test.sh [--unit-only] [--rxe-only] [--sanitizers]
#   --sanitizers: also run every unit test, and the in-process soft-RoCE tests (tag in_process,
#   in the same guest), built with --config=asan (ASan + UBSan, any report fails the test).
# Ends with one line `SUMMARY: N passed, N failed, N skipped`, counted from the GoogleTest XML
# results, and exits 0 only when failed and skipped are both 0 (a skipped soft-RoCE test means
# the device was missing, which is a failure here).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

run_unit=1
run_rxe=1
sanitizers=0
for arg in "$@"; do
  case "$arg" in
    --unit-only) run_rxe=0 ;;
    --rxe-only) run_unit=0 ;;
    --sanitizers) sanitizers=1 ;;
    -h | --help)
      sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "test.sh: unknown option '$arg'" >&2
      exit 2
      ;;
  esac
done

scripts/setup.sh

results=$(mktemp -d /tmp/nvmf-test.XXXXXX)
unit_xml_dir=$results/unit
rxe_xml_dir=$results/rxe
mkdir -p "$unit_xml_dir" "$rxe_xml_dir"
echo "test.sh: results in $results"

status=0
if [ $run_unit -eq 1 ]; then
  echo "test.sh: unit tests: bazel test //... --test_tag_filters=-rxe"
  bazel test //... --test_tag_filters=-rxe || status=$?
  testlogs=$(bazel info bazel-testlogs 2>/dev/null)
  # Each unit test's XML (fresh or cached) sits at bazel-testlogs/<package>/<name>/test.xml.
  while IFS= read -r t; do
    rel=${t#//}
    rel=${rel/://}
    xml=$testlogs/$rel/test.xml
    if [ -s "$xml" ]; then
      cp "$xml" "$unit_xml_dir/$(echo "$rel" | tr '/' '_').xml"
    else
      echo "test.sh: no result for $t" >&2
      status=1
    fi
  done < <(bazel query 'tests(//...) except attr(tags, "\brxe\b", tests(//...))' 2>/dev/null)
  if [ $sanitizers -eq 1 ]; then
    echo "test.sh: unit tests under ASan + UBSan: bazel test --config=asan //... --test_tag_filters=-rxe"
    t0=$SECONDS
    bazel test --config=asan //... --test_tag_filters=-rxe || status=$?
    echo "test.sh: sanitizer unit tests took $((SECONDS - t0)) s"
    asan_testlogs=$(bazel info --config=asan bazel-testlogs 2>/dev/null)
    while IFS= read -r t; do
      rel=${t#//}
      rel=${rel/://}
      xml=$asan_testlogs/$rel/test.xml
      if [ -s "$xml" ]; then
        cp "$xml" "$unit_xml_dir/$(echo "$rel" | tr '/' '_').asan.xml"
      else
        echo "test.sh: no ASan result for $t" >&2
        status=1
      fi
    done < <(bazel query 'tests(//...) except attr(tags, "\brxe\b", tests(//...))' 2>/dev/null)
  fi
fi

if [ $run_rxe -eq 1 ]; then
  mapfile -t rxe_tests < <(bazel query 'attr(tags, "\brxe\b", tests(//...))' 2>/dev/null)
  if [ ${#rxe_tests[@]} -eq 0 ]; then
    echo "test.sh: no soft-RoCE (rxe) tests are defined; running the soft-RoCE smoke test only"
    ci/rxe-run --results "$rxe_xml_dir" --timeout 600 ci/run-rxe-tests.sh /dev/null || status=$?
  else
    echo "test.sh: soft-RoCE suite: ${rxe_tests[*]}"
    bazel build "${rxe_tests[@]}" //host:nvmf-host //target:nvmf-target
    bin=$(bazel info bazel-bin 2>/dev/null)
    list=$rxe_xml_dir/tests.txt  # under the results dir: the guest sees it
    : >"$list"
    for t in "${rxe_tests[@]}"; do
      pkg=${t#//}
      pkg=${pkg%%:*}
      name=${t##*:}
      echo "$bin/$pkg/$name" >>"$list"
    done
    if [ $sanitizers -eq 1 ]; then
      # The in-process tests once more, ASan + UBSan builds, as NAME.asan in the same guest.
      mapfile -t asan_tests < <(bazel query 'attr(tags, "\bin_process\b", tests(//...))' 2>/dev/null)
      echo "test.sh: soft-RoCE suite under ASan + UBSan: ${asan_tests[*]}"
      bazel build --config=asan "${asan_tests[@]}" || status=$?
      asan_bin=$(bazel info --config=asan bazel-bin 2>/dev/null)
      for t in "${asan_tests[@]}"; do
        pkg=${t#//}
        pkg=${pkg%%:*}
        name=${t##*:}
        echo "$asan_bin/$pkg/$name $name.asan" >>"$list"
      done
    fi
    ci/rxe-run --results "$rxe_xml_dir" --timeout 2400 \
      ci/run-rxe-tests.sh "$list" || status=$?
  fi
fi

# The interop suite's field comparisons run here, on the host (ci/interop/judge.py).
if [ $run_rxe -eq 1 ]; then
  python3 ci/interop/judge.py "$rxe_xml_dir" || status=1
fi

# A guest that never got as far as the smoke test wrote no XML: count that as a failure.
if [ $run_rxe -eq 1 ] && [ ! -s "$rxe_xml_dir/rxe-smoke.xml" ]; then
  printf '<testsuites><testsuite name="RxeRun"><testcase classname="RxeRun" name="GuestRan"><failure message="ci/rxe-run produced no results"/></testcase></testsuite></testsuites>\n' \
    >"$rxe_xml_dir/rxe-run.xml"
fi

summary=$(python3 ci/count-gtest-xml.py "$unit_xml_dir" "$rxe_xml_dir")
echo "$summary" | sed '$d'
last=$(echo "$summary" | tail -n 1)
echo "$last"
case "$last" in
  *" 0 failed, 0 skipped") [ "$status" -eq 0 ] || exit "$status" ;;
  *) exit 1 ;;
esac
