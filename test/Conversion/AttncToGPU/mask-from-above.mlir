// A mask region that yields a value defined above it (canonicalization
// hoists a folded mask's constant out of the region): the kernels rebuild
// that value like any value from above. Forward: every score is masked by
// the false the region yields (before, the unmapped value was read as "no
// mask"); backward: the kernel builds (it crashed on the null value, found
// by the opt fuzzer on a generated sinks mask whose iotas folded away).
// RUN: attnc-opt %s --attnc-online-softmax="strategy=mma_sync" --attnc-convert-to-gpu | FileCheck %s
// RUN: attnc-opt %s --attnc-derive-backward --attnc-pipeline="to-nvvm=false" | FileCheck %s --check-prefix=BWD

// CHECK-LABEL: gpu.func @outer
// CHECK: %[[F:.+]] = arith.constant false
// CHECK: %[[KEEP:.+]] = arith.andi %[[F]], %{{.+}} : i1
// CHECK: arith.select %[[KEEP]], %{{.+}}, %{{.+}} : f32
// BWD: gpu.module @outer_backward
func.func @outer(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %false = arith.constant false
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        attnc.yield %false : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}
