#!/bin/sh
# Start one Ray node of an sbx fleet in the foreground.
#   node.sh head                 the head: GCS on 6379, Ray Client on 10001; runs no sandbox
#   node.sh worker HEAD:6379     a Docker node: declares the sbx_docker resource and its CPUs
# A worker needs the host's Docker socket, the host's pid namespace and cgroups, and $SBX_SHARED_DIR
# mounted at the same path as on the host (docs/fleet.md says why). $SBX_NODE_CPUS names the CPUs its
# sandboxes use (default: all it may run on); Ray is told as many CPUs as that list holds.
set -eu
role=${1:-head}
store=${SBX_OBJECT_STORE_BYTES:-200000000}
case "$role" in
head)
    exec ray start --head --port=6379 --ray-client-server-port=10001 --num-cpus=0 \
        --include-dashboard=false --object-store-memory="$store" --disable-usage-stats --block
    ;;
worker)
    address=${2:?usage: node.sh worker HEAD:6379}
    cpus=$(python -c 'from orchestrator.study.node import node_cpus; print(len(node_cpus()))')
    if [ "${SBX_PREPARE_DATA:-1}" = 1 ]; then
        sbx data prepare >/dev/null   # deterministic: the same bytes as the driver's; a no-op when present
    fi
    exec ray start --address="$address" --num-cpus="$cpus" --resources='{"sbx_docker": 1}' \
        --object-store-memory="$store" --disable-usage-stats --block
    ;;
*)
    echo "usage: node.sh head | node.sh worker HEAD:6379" >&2
    exit 2
    ;;
esac
