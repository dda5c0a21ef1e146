// A window's flash form with its masked tiles in one loop (the default,
// --attnc-online-softmax's one-masked-loop): the kernel's K/V loops count
// visits and load tile t(n), the select of the form, in every loop and in
// the loads ahead of them. The two loops slice their tiles alike and meet,
// so one load pipeline runs through both: the unmasked loop follows the
// masked one directly (no barrier and first loads of a new pipeline in
// between), carrying its results. The unmasked loop's tiles are whole
// (static 64-row slices): it has no tail split either.
// RUN: attnc-opt %s --attnc-online-softmax="block-q=128 block-kv=64 strategy=mma_sync" --canonicalize --cse --attnc-convert-to-gpu | FileCheck %s --strict-whitespace
// CHECK-LABEL: gpu.func @window
// CHECK:       gpu.barrier
// CHECK:       %[[MASKED:.*]]:72 = scf.for %{{.*}} = %{{.*}} to %[[M:[^ ]*]] step
// CHECK:         arith.select %{{.*}} : index
// CHECK:         %[[TILE:.*]] = arith.select %{{.*}} : index
// CHECK:         nvgpu.device_async_copy
// CHECK:       {{^      [}]$}}
// CHECK-NEXT:  {{^      }}%{{.*}} = arith.constant 1 : index
// CHECK-NEXT:  {{^      }}%[[FULL:.*]]:72 = scf.for %{{.*}} = %[[M]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MASKED]]#0,
// CHECK:       {{^      [}]$}}
// CHECK-NOT:   scf.for
// CHECK:       gpu.return
func.func @window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi slt, %d, %w : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %causal, %near : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}
