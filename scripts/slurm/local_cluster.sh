#!/usr/bin/env bash
# A one-node Slurm cluster on this machine (Debian's slurm-wlm and munge), to
# run the templates of this folder for real: slurmctld and slurmd on
# localhost, one partition, the node declared with 32 CPUs and one GPU (gres
# without a device file) so the templates' --cpus-per-task and --gres requests
# are granted on any machine. For testing the templates, not for production.
#   scripts/slurm/local_cluster.sh start   # as root; apt-get install slurm-wlm first
#   scripts/slurm/local_cluster.sh stop
# It writes /etc/slurm/slurm.conf and gres.conf only where none exists or the
# existing one is its own (first line below), and keeps its state in
# /var/spool/ptxbench-slurm.
set -euo pipefail
marker="# ptxbench local one-node cluster (scripts/slurm/local_cluster.sh)"
state=/var/spool/ptxbench-slurm
conf=/etc/slurm/slurm.conf
node=$(hostname -s)

write_config() {
  if [[ -f $conf ]] && [[ $(head -n1 "$conf") != "$marker" ]]; then
    echo "$conf exists and is not this script's: not touching a real cluster's configuration" >&2
    exit 2
  fi
  mkdir -p "$state/ctld" "$state/d" /var/log/slurm
  cat > "$conf" <<CONF
$marker
ClusterName=ptxbench-local
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=3600
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 CPUs=32 RealMemory=4096 Gres=gpu:1 State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
  # A gpu gres needs a character device named with its index: a copy of
  # /dev/null (1,3) stands in. Jobs get CUDA_VISIBLE_DEVICES=0 and the
  # machine's real devices, if any, as usual (no cgroup confinement here).
  [[ -c $state/gpu0 ]] || mknod "$state/gpu0" c 1 3
  printf '%s\nNodeName=%s Name=gpu File=%s\n' "$marker" "$node" "$state/gpu0" > /etc/slurm/gres.conf
}

start() {
  command -v slurmctld > /dev/null || { echo "slurm-wlm is not installed (apt-get install slurm-wlm)" >&2; exit 2; }
  write_config
  if ! pgrep -x munged > /dev/null; then
    mkdir -p /run/munge && chown munge:munge /run/munge
    runuser -u munge -- /usr/sbin/munged
  fi
  pgrep -x slurmctld > /dev/null || slurmctld
  pgrep -x slurmd > /dev/null || slurmd
  for _ in $(seq 60); do
    case $(sinfo -h -n "$node" -o '%T' 2> /dev/null) in
      idle) sinfo; return 0 ;;
      # A drain left by an earlier configuration (state is kept across restarts).
      drained | draining) scontrol update NodeName="$node" State=RESUME ;;
    esac
    sleep 1
  done
  echo "the node did not become idle in 60 s; see /var/log/slurm/" >&2
  sinfo >&2 || true
  exit 3
}

stop() {
  for daemon in slurmd slurmctld; do
    pid_file=$state/$daemon.pid
    if [[ -f $pid_file ]]; then kill "$(cat "$pid_file")" 2> /dev/null || true; fi
  done
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
