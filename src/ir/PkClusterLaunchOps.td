//===- PkClusterLaunchOps.td - Cluster launch control ------*- tablegen -*-===//
//
// Dynamic work scheduling on Blackwell (sm_100a): a running CTA cancels the
// launch of a cluster that has not started yet and does its work instead
// (`plgpu.try_cluster_cancel`, `plgpu.query_cluster_cancel`, and the loop
// JAX builds from them, `plgpu.dynamic_scheduling_loop`). Included from
// PkMosaicGpuOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLUSTER_LAUNCH_OPS_TD
#define PK_CLUSTER_LAUNCH_OPS_TD

def Pk_TryClusterCancelOp : Pk_Op<"try_cluster_cancel", []> {
  let summary = "asks to take over the work of a cluster that has not started";
  let description = [{
    `plgpu.try_cluster_cancel(result, barrier)`: every Pallas thread of the
    CTA calls it, and each arrives once at `barrier` (one of a
    plgpu.Barrier with num_arrivals = the threads per CTA). One request per
    cluster cancels, if it can, the launch of a cluster that has not
    started running, and writes the opaque 16-byte answer into `result`
    (an int8 (16,) Ref in shared memory) of every CTA of the cluster; the
    barrier completes once it has. `pk.query_cluster_cancel` reads it.

    ```mlir
    pk.try_cluster_cancel %answer, %done[%slot]
        : !pk.ref<16xi8, #pk.memory_space<shared>>, !pk.barrier<[2], arrivals 1>
    ```
  }];
  let arguments = (ins Pk_RefType:$result, Pk_BarrierType:$barrier, Variadic<Index>:$indices);
  let assemblyFormat = [{
    $result `,` $barrier (`[` $indices^ `]`)? attr-dict `:` qualified(type($result)) `,`
    qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def Pk_QueryClusterCancelOp : Pk_Op<"query_cluster_cancel", []> {
  let summary = "reads the answer of a try_cluster_cancel";
  let description = [{
    `plgpu.query_cluster_cancel(result, grid_names)`: whether the request
    whose answer `result` holds cancelled a cluster, and that cluster's
    indices along the kernel's grid axes `grid_axes` (positions in the
    mesh's grid; meaningful only when it did).

    ```mlir
    %m, %n, %ok = pk.query_cluster_cancel %answer grid_axes [0, 1]
        : !pk.ref<16xi8, #pk.memory_space<shared>> -> i32, i32, i1
    ```
  }];
  let arguments = (ins Pk_RefType:$result, DenseI64ArrayAttr:$grid_axes);
  let results = (outs Variadic<I32>:$indices, I1:$canceled);
  let assemblyFormat = [{
    $result `grid_axes` $grid_axes attr-dict `:` qualified(type($result)) `->` type(results)
  }];
  let hasVerifier = 1;
}

#endif // PK_CLUSTER_LAUNCH_OPS_TD
