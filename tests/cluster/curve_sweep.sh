# Sourced by the cluster tests and benchmarks that run curve-trainer pods on the test node.
#
# curve_sweep NAME SPEC ARGS [CONTAINER] [TRIAL]: prints a BudgetSweep (YAML) named NAME in $NS
# whose trials are budgetsweep/curve-trainer:$VERSION pods on node $BSW_NODE_NAME, one GPU each,
# with a checkpoint volume; objective validation_accuracy, rungs at epochs 1, 3 and 9.
#   SPEC       the rest of spec, indented two spaces (budget, scheduler, searchSpace, ...)
#   ARGS       the trainer's args, as the items of a YAML flow list ('"--seconds-per-epoch=2"')
#   CONTAINER  more lines of the container, indented twelve spaces (resources, ...)
#   TRIAL      more lines of spec.trial, indented four spaces (maxRetries, ...)
# CURVE_VOLUMES and CURVE_MOUNTS add block-list items to the pod's volumes and the container's
# volumeMounts; CURVE_CHECKPOINTS is the checkpoint volume's source (default an emptyDir).
curve_sweep() {
  local checkpoints=${CURVE_CHECKPOINTS:-'emptyDir: {}'}
  cat <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata: {name: $1, namespace: $NS}
spec:
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
$2
  trial:
    gpus: 1
${5:-}
    template:
      spec:
        terminationGracePeriodSeconds: 2
        nodeSelector: {kubernetes.io/hostname: "$BSW_NODE_NAME"}
        volumes:
          - {name: checkpoints, $checkpoints}
${CURVE_VOLUMES:-}
        containers:
          - name: trainer
            image: budgetsweep/curve-trainer:$VERSION
            args: [$3]
            volumeMounts:
              - {name: checkpoints, mountPath: /checkpoints}
${CURVE_MOUNTS:-}
${4:-}
YAML
}

# node_claim CLAIM DIR: a PersistentVolumeClaim CLAIM in $NS bound to a hostPath PersistentVolume
# ($NS-CLAIM) on the node's directory DIR, as YAML for kubectl apply: how the cluster's admin (the
# test) gives trials a directory on the node, which a sweep may not mount as a hostPath itself
# (operator/core/template_policy.h). The PersistentVolume outlives the namespace: delete it after.
node_claim() {
  cat <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $NS-$1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: "$2", type: Directory}
  claimRef: {namespace: $NS, name: $1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1, namespace: $NS}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: $NS-$1
  resources: {requests: {storage: 1Gi}}
YAML
}
