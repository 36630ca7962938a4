# Sourced by .ci/run and .ci/check_package: commands run side by side (each mostly on one
# core), their logs shown whole one after the other, any failure failing the caller.

JOBS=()

# start_job LOG COMMAND [ARGUMENT...]: COMMAND (a function of the caller too) in the
# background, its output into LOG.
start_job() {
    local log=$1
    shift
    ("$@") > "$log" 2>&1 &
    JOBS+=("$!:$log")
}

# wait_jobs: wait for every job started, in order, and show its log; returns 1 when any
# failed, naming its log's file.
wait_jobs() {
    local job status failed=0
    for job in "${JOBS[@]}"; do
        status=0
        wait "${job%%:*}" || status=$?
        cat "${job#*:}"
        if [ "$status" -ne 0 ]; then
            echo "$(basename "${job#*:}" .log) exited $status (its log is above)" >&2
            failed=1
        fi
    done
    JOBS=()
    return "$failed"
}
