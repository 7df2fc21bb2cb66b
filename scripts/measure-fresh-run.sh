#!/usr/bin/env bash
# measure-fresh-run.sh [ROOT]: how long `make run` takes on a fresh Debian 12 machine, measured in
# a clean root made with mmdebstrap (root; nothing cached: no apt archives, ccache or
# ~/.cache/budgetsweep). Prints the seconds from the command to the first SegmentLaunched in the
# quickstart's journal and to its end, then the summary. The root is made anew each time.
set -euo pipefail
root=${1:-/tmp/bsw-fresh-root}
checkout=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "run as root (mmdebstrap and chroot)" >&2; exit 2; }
for mount in proc dev sys; do umount "$root/$mount" 2>/dev/null || true; done
rm -rf "$root"
mmdebstrap --quiet --variant=apt --include=ca-certificates,make,git bookworm "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount -t sysfs sys "$root/sys"
trap 'for m in proc dev sys; do umount "$root/$m" 2>/dev/null || true; done' EXIT
git clone --quiet "$checkout" "$root/root/budgetsweep"
git -C "$root/root/budgetsweep" log --oneline -1
chroot "$root" /bin/bash -c '
cd /root/budgetsweep
start=$(date +%s.%N)
make run >/root/make-run.log 2>&1 &
pid=$! first=""
while kill -0 "$pid" 2>/dev/null; do
  if [ -z "$first" ] && grep -qs SegmentLaunched /tmp/budgetsweep-quickstart-*/journal.jsonl; then
    first=$(date +%s.%N)
    echo "first SegmentLaunched after $(awk "BEGIN{print $first - $start}") s"
  fi
  sleep 0.5
done
rc=0
wait "$pid" || rc=$?
echo "make run exited $rc after $(awk "BEGIN{print $(date +%s.%N) - $start}") s"
tail -n 7 /root/make-run.log
exit "$rc"'
