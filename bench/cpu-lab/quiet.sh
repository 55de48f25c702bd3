# Sourced by run-all.sh and record.sh: quiet waits (up to $wait_max
# seconds) for the 1-minute load average to fall under $load_max, since
# this VM is shared and CPU timings move with other work; prints how long.
quiet() {
  waited=0
  while [ "$(awk '{print ($1 < '"$load_max"') ? 1 : 0}' /proc/loadavg)" != 1 ] && [ $waited -lt "$wait_max" ]; do
    sleep 20
    waited=$((waited + 20))
  done
  echo "# load $(cut -d' ' -f1-3 /proc/loadavg) after waiting ${waited}s"
}
