#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced by ci/interop/run.sh, not run on its own.)
# shellcheck disable=SC2154 # out, host_bin, ns_dev, T, H, NQN: ci/interop/run.sh's
# shellcheck disable=SC2317 # the check functions are called through check()
# DH-HMAC-CHAP in-band authentication checks of the interop suite, sourced by ci/interop/run.sh
# (NVMF_INTEROP_ONLY=auth) on a guest kernel with authentication on both sides (Debian 13's 6.12:
# NVMF_RXE_KERNEL=6.12). Uses run.sh's check, k_disconnect, wait_ns, ctrl_dev, start_target,
# stop_target, fio and the null_blk namespace $ns_dev.
#
#  KernelHostAuthOnNvmfTarget: the Linux host (nvme connect --dhchap-secret) against nvmf-target
#    configured from nvmetcli JSON with a "dhchap" group per host: every hash with the null group
#    and with ffdhe2048, SHA-512 with ffdhe8192, bidirectional (--dhchap-ctrl-secret); each
#    connects, says in dmesg which hash and group it authenticated with, and passes a fio
#    verify; a wrong secret, a wrong controller secret and no secret are refused (nvme connect
#    fails, no controller is left). No secret appears in the target's log or JSON report.
#  NvmfHostAuthOnNvmfTarget: nvmf-host -S/-C against the same target, every hash and group as
#    above and bidirectional: write, read back, equal; a wrong secret, no secret and a wrong
#    controller secret are refused naming the step.
#  NvmfHostAuthOnKernelTarget: nvmf-host against nvmet configured through configfs with the same
#    keys: the same, unidirectional and bidirectional, and a wrong key refused.
#  ConformAuth: nvmf-host conform's authentication cases against nvmf-target (every one must
#    pass, the dangerous ones included) and against nvmet (its answers recorded in
#    conform-auth-nvmet.json and .txt for docs/conformance.md).
#  AuthConnectTime: milliseconds of nvmf-host identify (connect, authenticate every queue,
#    Identify, disconnect) without a key and with each DH group, against nvmf-target; printed in
#    the log and in auth-connect-times.txt for docs/performance.md.

auth_suite() {
  local s=KernelHostAuthOnNvmfTarget cfg=$out/config-auth.json tag=auth
  local uuid_base=7a1b2c3d-0000-4000-8000-00000000000
  # One host NQN per case, each with its own key (its uuid is its host ID too: Linux refuses one
  # host ID under two NQNs).
  local -a names=(sha256_null sha384_null sha512_null sha256_ffdhe2048 sha384_ffdhe2048
    sha512_ffdhe2048 sha512_ffdhe8192 bidirectional)
  local -A nqn key ctrl hash group
  local i n
  for i in "${!names[@]}"; do
    n=${names[$i]}
    nqn[$n]=nqn.2014-08.org.nvmexpress:uuid:${uuid_base}$i
    hash[$n]=hmac\(${n%%_*}\)
    group[$n]=${n#*_}
    key[$n]=$("$host_bin" gen-dhchap-key --hmac 1 --nqn "${nqn[$n]}") || return
  done
  hash[bidirectional]='hmac(sha256)'
  group[bidirectional]=ffdhe2048
  ctrl[bidirectional]=$("$host_bin" gen-dhchap-key --key-length 48) || return
  local wrong plain=nqn.2014-08.org.nvmexpress:uuid:7a1b2c3d-0000-4000-8000-0000000000ff
  wrong=$("$host_bin" gen-dhchap-key) || return
  {
    echo '{"hosts": ['
    for i in "${!names[@]}"; do
      n=${names[$i]}
      printf '  {"nqn": "%s", "dhchap": {"key": "%s", "ctrl_key": "%s", "hash": "%s", "dhgroup": "%s"}}%s\n' \
        "${nqn[$n]}" "${key[$n]}" "${ctrl[$n]:-}" "${hash[$n]}" "${group[$n]}" \
        "$([ "$i" -lt $((${#names[@]} - 1)) ] && echo ,)"
    done
    printf '  ,{"nqn": "%s"}\n' "$plain"
    echo '],'
    printf '"ports": [{"portid": 1, "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "%s", "trsvcid": "4420"}, "subsystems": ["%s"]}],\n' "$T" "$NQN"
    printf '"subsystems": [{"nqn": "%s", "attr": {"allow_any_host": "0"}, "allowed_hosts": [' "$NQN"
    for i in "${!names[@]}"; do printf '"%s", ' "${nqn[${names[$i]}]}"; done
    printf '"%s"], "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "%s"}}]}]}\n' "$plain" "$ns_dev"
  } >"$cfg"
  # ffdhe8192's 8192-bit modular exponentiations take seconds on each side under emulation (the
  # kernel host's more than 10 s on a slow emulated machine): the target gives a queue 120 s to
  # authenticate (--connect-timeout-ms) and the kernel host asks for a KATO of 60 s (the keep-alive
  # timer runs from the Connect, and no Keep Alive comes before the authentication ends). A
  # Linux 6.12 host whose controller is freed in the middle of authenticating leaves
  # `nvme connect` blocked in the kernel.
  check "$s" start_target start_target "$cfg" "$tag" --connect-timeout-ms 120000 || return

  # k_auth NAME SECRET [CTRL_SECRET]: nvme connect with the keys; dmesg names the hash and group;
  # a fio verify on the namespace; disconnect.
  k_auth() {
    local n=$1 id=${nqn[$1]##*:} dev mark extra=()
    mark="auth-check-$n-$RANDOM"
    echo "$mark" >/dev/kmsg
    [ -n "${3:-}" ] && extra=(--dhchap-ctrl-secret "$3")
    nvme connect -t rdma -a "$T" -s 4420 -w "$H" -n "$NQN" -q "${nqn[$n]}" -I "$id" -i 1 \
      --keep-alive-tmo 60 --dhchap-secret "$2" "${extra[@]}" || return 1
    dev=$(wait_ns) || { echo "no namespace"; return 1; }
    dmesg | sed -n "/$mark/,\$p" | grep -E 'authenticated' || true
    dmesg | sed -n "/$mark/,\$p" |
      grep -q "qid 0: authenticated with hash ${hash[$n]} dhgroup ${group[$n]}" ||
      { echo "dmesg does not say ${hash[$n]} ${group[$n]}"; k_disconnect; return 1; }
    if [ -n "${3:-}" ]; then
      dmesg | sed -n "/$mark/,\$p" | grep -q 'qid 0: controller authenticated' ||
        { echo "the host did not authenticate the controller"; k_disconnect; return 1; }
    fi
    timeout -k 5 60 fio --name=auth --filename="$dev" --ioengine=libaio --direct=1 --rw=randwrite \
      --bs=4k --iodepth=4 --size=1m --verify=crc32c --verify_fatal=1 --output="$out/auth-fio-$n.txt" ||
      { cat "$out/auth-fio-$n.txt"; k_disconnect; return 1; }
    grep -E 'err= *0' "$out/auth-fio-$n.txt" || { k_disconnect; return 1; }
    k_disconnect
  }
  # k_refused NAME SECRET [CTRL_SECRET]: nvme connect fails and leaves no controller.
  k_refused() {
    local n=$1 id=${nqn[$1]##*:}
    local args=(-t rdma -a "$T" -s 4420 -w "$H" -n "$NQN" -q "${nqn[$n]}" -I "$id" -i 1)
    [ -n "${2:-}" ] && args+=(--dhchap-secret "$2")
    [ -n "${3:-}" ] && args+=(--dhchap-ctrl-secret "$3")
    if nvme connect "${args[@]}"; then
      echo "nvme connect succeeded"
      nvme disconnect -n "$NQN"
      return 1
    fi
    sleep 1
    [ -z "$(ctrl_dev)" ] || { echo "a controller is left: $(ctrl_dev)"; nvme disconnect -n "$NQN"; return 1; }
    dmesg | tail -n 5
    echo "refused"
  }
  for n in "${names[@]}"; do
    [ "$n" = bidirectional ] && continue
    check "$s" "${n}_connects_and_verifies" k_auth "$n" "${key[$n]}"
  done
  check "$s" bidirectional_connects_and_verifies k_auth bidirectional "${key[bidirectional]}" \
    "${ctrl[bidirectional]}"
  check "$s" wrong_secret_refused k_refused sha256_null "$wrong"
  check "$s" wrong_controller_secret_refused k_refused bidirectional "${key[bidirectional]}" "$wrong"
  check "$s" no_secret_refused k_refused sha256_ffdhe2048 ""
  local tlog=$out/target-$tag.log
  check "$s" failure_logged grep -m 3 'DH-HMAC-CHAP authentication failed' "$tlog"

  s=NvmfHostAuthOnNvmfTarget
  head -c 65536 /dev/urandom >"$out/auth-data.bin"
  # o_auth NAME SECRET [CTRL_SECRET]: nvmf-host writes, reads back, compares.
  o_auth() {
    local n=$1 c=()
    [ -n "${3:-}" ] && c=(-C "$3")
    "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "${nqn[$n]}" -S "$2" "${c[@]}" \
      --nr-io-queues 2 write -d "$out/auth-data.bin" -o 1m &&
      "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "${nqn[$n]}" -S "$2" "${c[@]}" \
        read -d "$out/auth-back-$n.bin" -o 1m -l 65536 &&
      cmp "$out/auth-data.bin" "$out/auth-back-$n.bin" && echo "read back equal"
  }
  # o_refused NAME SECRET CTRL_SECRET WORDS: nvmf-host identify fails, its message has WORDS.
  o_refused() {
    local o keys=()
    [ -n "$2" ] && keys+=(-S "$2")
    [ -n "$3" ] && keys+=(-C "$3")
    if o=$("$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "${nqn[$1]}" "${keys[@]}" identify 2>&1); then
      echo "identify succeeded"
      return 1
    fi
    echo "$o"
    echo "$o" | grep -qF "$4"
  }
  for n in "${names[@]}"; do
    [ "$n" = bidirectional ] && continue
    check "$s" "${n}_write_read_compare" o_auth "$n" "${key[$n]}"
  done
  check "$s" bidirectional_write_read_compare o_auth bidirectional "${key[bidirectional]}" \
    "${ctrl[bidirectional]}"
  check "$s" wrong_secret_refused o_refused sha256_null "$wrong" "" \
    'DH-HMAC-CHAP Reply refused (AUTH_Failure1: authentication failed)'
  check "$s" no_secret_refused o_refused sha256_null "" "" 'give --dhchap-secret'
  check "$s" wrong_controller_secret_refused o_refused bidirectional "${key[bidirectional]}" \
    "$wrong" 'does not match --dhchap-ctrl-secret'

  # Connect time, against nvmf-target: no key, then each group (SHA-512 for ffdhe8192).
  s=AuthConnectTime
  # connect_times: NVMF_AUTH_TIME_ROUNDS rounds (default 3; CI runs 1: it checks that every
  # mode connects, the figures come from a run of 3), each timing every mode once (interleaved:
  # a drift of the emulated machine's speed weighs on all alike); per mode the median and the
  # range.
  connect_times() {
    local t0 t1 n r modes=(none sha256_null sha256_ffdhe2048 sha512_ffdhe8192)
    local rounds=${NVMF_AUTH_TIME_ROUNDS:-3} median
    local -A ms
    [[ $rounds =~ ^[1-9]$ ]] || { echo "NVMF_AUTH_TIME_ROUNDS wants 1..9, not '$rounds'"; return 1; }
    for ((r = 0; r < rounds; r++)); do
      for n in "${modes[@]}"; do
        t0=$(date +%s%N)
        if [ "$n" = none ]; then
          "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "$plain" --nr-io-queues 2 identify \
            >/dev/null || return 1
        else
          "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "${nqn[$n]}" -S "${key[$n]}" \
            --nr-io-queues 2 identify >/dev/null || return 1
        fi
        t1=$(date +%s%N)
        ms[$n]="${ms[$n]:-} $(((t1 - t0) / 1000000))"
      done
    done
    : >"$out/auth-connect-times.txt"
    for n in "${modes[@]}"; do
      # shellcheck disable=SC2046,SC2086 # the list of numbers, split on purpose
      set -- $(printf '%s\n' ${ms[$n]} | sort -n)
      median=$(eval "echo \${$(((rounds + 1) / 2))}")
      echo "$n: median $median ms ($1-${!#}) over $rounds round(s): connect, authenticate the admin and 2 I/O queues, Identify, disconnect" |
        tee -a "$out/auth-connect-times.txt"
    done
  }
  check "$s" nvmf_target connect_times

  s=ConformAuth
  local auth_cases=auth.required-before-commands,auth.io-queue-authenticates,auth.wrong-key
  auth_cases+=,auth.wrong-controller-key,auth.unusable-hash,auth.unusable-dhgroup
  auth_cases+=,auth.replayed-reply,auth.wrong-transaction-id,auth.truncated-reply
  auth_cases+=,auth.second-negotiate,auth.stalled-transaction
  conform_auth() { # conform_auth TAG EXTRA...: the authentication cases as host sha256_ffdhe2048
    local tag=$1
    shift
    timeout -k 5 300 "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "${nqn[sha256_ffdhe2048]}" \
      -S "${key[sha256_ffdhe2048]}" conform --cases "$auth_cases" --json "$out/$tag.json" "$@" \
      >"$out/$tag.txt"
    local rc=$?
    cat "$out/$tag.txt"
    return "$rc"
  }
  check "$s" nvmf_target_every_case_passes conform_auth conform-auth-ours --include-dangerous
  check KernelHostAuthOnNvmfTarget stop_target stop_target
  secrets_kept() {
    local n k b64 found=0
    for n in "${names[@]}"; do
      for k in "${key[$n]}" "${ctrl[$n]:-}"; do
        [ -n "$k" ] || continue
        b64=${k:10:24}
        if grep -rqF "$b64" "$tlog" "$out/target-$tag.json"; then
          echo "a secret of $n is in the target's log or report"
          found=1
        fi
      done
    done
    [ "$found" -eq 0 ] && echo "no secret in $tlog or its JSON report"
  }
  check KernelHostAuthOnNvmfTarget no_secret_in_log_or_report secrets_kept

  # nvmf-host against nvmet, configured through configfs with the same keys.
  s=NvmfHostAuthOnKernelTarget
  local cfs=/sys/kernel/config/nvmet
  nvmet_auth_setup() {
    local n h
    mkdir -p "$cfs/subsystems/$NQN" || return 1
    echo 0 >"$cfs/subsystems/$NQN/attr_allow_any_host"
    for n in sha256_ffdhe2048 sha512_ffdhe8192 bidirectional; do
      h=$cfs/hosts/${nqn[$n]}
      mkdir -p "$h"
      echo "${key[$n]}" >"$h/dhchap_key" || return 1
      [ -z "${ctrl[$n]:-}" ] || echo "${ctrl[$n]}" >"$h/dhchap_ctrl_key" || return 1
      echo "${hash[$n]}" >"$h/dhchap_hash" || return 1
      echo "${group[$n]}" >"$h/dhchap_dhgroup" || return 1
      ln -s "$h" "$cfs/subsystems/$NQN/allowed_hosts/${nqn[$n]}" || return 1
    done
    mkdir -p "$cfs/subsystems/$NQN/namespaces/1"
    echo "$ns_dev" >"$cfs/subsystems/$NQN/namespaces/1/device_path"
    echo 1 >"$cfs/subsystems/$NQN/namespaces/1/enable" || return 1
    mkdir -p "$cfs/ports/1"
    echo rdma >"$cfs/ports/1/addr_trtype"
    echo ipv4 >"$cfs/ports/1/addr_adrfam"
    echo "$T" >"$cfs/ports/1/addr_traddr"
    echo 4420 >"$cfs/ports/1/addr_trsvcid"
    ln -s "$cfs/subsystems/$NQN" "$cfs/ports/1/subsystems/$NQN" || return 1
    for n in sha256_ffdhe2048 bidirectional; do cat "$cfs/hosts/${nqn[$n]}/dhchap_dhgroup"; done
  }
  nvmet_auth_clear() {
    local h
    rm -f "$cfs/ports/1/subsystems/$NQN"
    rmdir "$cfs/ports/1" 2>/dev/null
    echo 0 >"$cfs/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
    rmdir "$cfs/subsystems/$NQN/namespaces/1" 2>/dev/null
    for h in "$cfs/subsystems/$NQN/allowed_hosts/"*; do [ -L "$h" ] && rm -f "$h"; done
    rmdir "$cfs/subsystems/$NQN" 2>/dev/null
    for h in "$cfs/hosts/"*; do [ -d "$h" ] && rmdir "$h" 2>/dev/null; done
    true
  }
  if check "$s" configfs_keys nvmet_auth_setup; then
    check "$s" ffdhe2048_write_read_compare o_auth sha256_ffdhe2048 "${key[sha256_ffdhe2048]}"
    check "$s" sha512_ffdhe8192_write_read_compare o_auth sha512_ffdhe8192 \
      "${key[sha512_ffdhe8192]}"
    check "$s" bidirectional_write_read_compare o_auth bidirectional "${key[bidirectional]}" \
      "${ctrl[bidirectional]}"
    # nvmet queues AUTH_Failure1 and tears the controller down at once: the host reports the
    # refused Reply either way (with the controller's explanation when Failure1 arrived first).
    check "$s" wrong_secret_refused o_refused sha256_ffdhe2048 "$wrong" "" \
      'DH-HMAC-CHAP Reply refused ('
    check "$s" wrong_controller_secret_refused o_refused bidirectional "${key[bidirectional]}" \
      "$wrong" 'does not match --dhchap-ctrl-secret'
    # nvmet's answers are findings, not our failures: the run must complete.
    nvmet_conform() {
      conform_auth conform-auth-nvmet
      [ -s "$out/conform-auth-nvmet.json" ]
    }
    check ConformAuth nvmet_answers_recorded nvmet_conform
  fi
  nvmet_auth_clear
}
