//===- PkMosaicGpuTypes.td - Mosaic GPU types of pk --------*- tablegen -*-===//
//
// The synchronization objects of the Mosaic GPU programming model
// (`from jax.experimental.pallas import mosaic_gpu as plgpu`): arrays of
// mbarriers and GMEM semaphores. Included from PkTypes.td, so that the
// dialect's one generated type parser and printer sees them.
//
//===----------------------------------------------------------------------===//
#ifndef PK_MOSAIC_GPU_TYPES_TD
#define PK_MOSAIC_GPU_TYPES_TD

def Pk_BarrierType : Pk_Type<"Barrier", "barrier"> {
  let summary = "an array of mbarriers in shared memory";
  let description = [{
    `plgpu.Barrier(num_arrivals=, num_barriers=)`: `shape` barriers, each
    completing a phase after `arrivals` arrivals (`plgpu.barrier_arrive`,
    or one per async copy that names it). With `cluster` axes it is a
    `plgpu.ClusterBarrier`: an arrival arrives at the barrier of every
    block of the cluster along those axes, and each barrier expects
    `arrivals` from each of them. `orders_tensor_core` is Blackwell's
    ordering of tensor-core operations around the barrier.

    ```mlir
    !pk.barrier<[3], arrivals 2>
    !pk.barrier<[1], arrivals 1, cluster ["x"]>
    !pk.barrier<[2], arrivals 1, orders_tensor_core>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "int64_t":$numArrivals,
    "::mlir::ArrayAttr":$clusterAxes,
    "bool":$ordersTensorCore
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumBarriers() const;
    bool isClusterBarrier() const { return getClusterAxes() && !getClusterAxes().empty(); }
  }];
}

def Pk_SemaphoreType : Pk_Type<"Semaphore", "semaphore"> {
  let summary = "an array of counters that programs and DMAs synchronize on";
  let description = [{
    `plgpu.SemaphoreType.REGULAR` / `pltpu.SemaphoreType.REGULAR` (or
    `.BARRIER`): counters that `pl.semaphore_signal` increments and
    `pl.semaphore_wait` waits on (and decrements); on GPUs they live in
    global memory and synchronize blocks of the grid. `dma`
    (`pltpu.SemaphoreType.DMA`): what an async copy (`pk.dma_start`)
    signals when it lands and its `pk.dma_wait` waits for. They start at
    zero.

    ```mlir
    !pk.semaphore<[]>
    !pk.semaphore<[4], barrier>
    !pk.semaphore<[2], dma>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::pk::SemaphoreKind":$kind);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    bool isBarrier() const { return getKind() == ::pk::SemaphoreKind::Barrier; }
    bool isDma() const { return getKind() == ::pk::SemaphoreKind::DMA; }
  }];
}

#endif // PK_MOSAIC_GPU_TYPES_TD
