// Masks whose keys are an interval lo(i) <= j <= hi(i), one-sided (causal of
// either alignment, prefix-LM) or bounded on both sides, or with id matches,
// are tested per row in the kernel, not evaluated per score: once
// per row slot and step the bounds relative to the thread's first column,
// clamped into [-1, 2^20] and cast to i32 (through an opaque move: LLVM
// would compare the 64-bit values again); per score one 32-bit comparison
// of its constant column offset per side that cuts a row of the warp. The region's 64-bit position
// arithmetic does not reach the score path. Document ids: where the query
// tile has one id, or two in two blocks of rows, and each id's keys are
// one run (the tile's id bounds tell), the row's run cuts its range;
// elsewhere the ids are read and compared per score. A mask with no interval form (|i - j| <= 256 through max) is
// evaluated per score as written.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=128 block-kv=64 strategy=mma_sync" --canonicalize --cse --attnc-convert-to-gpu | FileCheck %s

// A window of 1024 keys: lo(i) = i - 1024 + 1 (the size is a value from
// above once canonicalization hoists the region's constant), hi(i) = i (at
// most Skv - 1: the masked loop takes the tail tile too).
// CHECK-LABEL: gpu.func @window
// CHECK-NOT:   arith.cmpi slt, %{{.*}}, %c1024
// CHECK:       scf.for {{.*}} -> (f32
// CHECK:         %[[LOMAX:.*]] = arith.maxsi %{{.*}}, %[[BELOW:[^ ]*]] : index
// CHECK-NEXT:    %[[LOCLAMP:.*]] = arith.minsi %[[LOMAX]], %[[ABOVE:[^ ]*]] : index
// CHECK-NEXT:    %[[LOREL:.*]] = arith.subi %[[LOCLAMP]], %[[J0:[^ ]*]] : index
// CHECK-NEXT:    %[[FIRST32:.*]] = arith.index_cast %[[LOREL]] : index to i32
// CHECK-NEXT:    %[[FIRST:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %[[FIRST32]]
// CHECK-NEXT:    %[[HI:.*]] = arith.minsi %{{.*}}, %[[LASTKEY:[^ ]*]] : index
// CHECK-NEXT:    %[[HIMAX:.*]] = arith.maxsi %[[HI]], %[[BELOW]] : index
// CHECK-NEXT:    %[[HICLAMP:.*]] = arith.minsi %[[HIMAX]], %[[ABOVE]] : index
// CHECK-NEXT:    %[[HIREL:.*]] = arith.subi %[[HICLAMP]], %[[J0]] : index
// CHECK-NEXT:    %[[LAST32:.*]] = arith.index_cast %[[HIREL]] : index to i32
// CHECK-NEXT:    %[[LAST:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %[[LAST32]]
// A side tests a warp's scores only where it cuts one of the warp's rows:
// lo where some first > 0, hi where some last < 57 (the thread's last
// column offset in a tile of 64 keys), each from a vote over the warp; a
// window's masked tiles are cut on one side each.
// CHECK:         arith.cmpi sgt, %[[FIRST]], %c0_i32{{.*}} : i32
// CHECK:         %[[LOCUTS:.*]] = nvvm.vote.sync  any %{{.*}}, %{{.*}} -> i1
// CHECK:         arith.cmpi slt, %[[LAST]], %c57_i32{{.*}} : i32
// CHECK:         %[[HICUTS:.*]] = nvvm.vote.sync  any %{{.*}}, %{{.*}} -> i1
// CHECK-NEXT:    scf.if %[[LOCUTS]] -> (f32
// CHECK-NEXT:      scf.if %[[HICUTS]] -> (f32
// CHECK:             %[[GE:.*]] = arith.cmpi sle, %[[FIRST]], %c0_i32{{.*}} : i32
// CHECK-NEXT:        %[[LE:.*]] = arith.cmpi sle, %c0_i32{{.*}}, %[[LAST]] : i32
// CHECK-NEXT:        %[[KEEP:.*]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK-NEXT:        arith.select %[[KEEP]], %{{.*}}, %{{.*}} : f32
// CHECK:           } else {
// CHECK:             %[[GE1:.*]] = arith.cmpi sle, %[[FIRST]], %c0_i32{{.*}} : i32
// CHECK-NEXT:        arith.select %[[GE1]], %{{.*}}, %{{.*}} : f32
// CHECK:         } else {
// CHECK-NEXT:      scf.if %[[HICUTS]] -> (f32
// CHECK:             %[[LE1:.*]] = arith.cmpi sle, %c0_i32{{.*}}, %[[LAST]] : i32
// CHECK-NEXT:        arith.select %[[LE1]], %{{.*}}, %{{.*}} : f32
// CHECK:           } else {
// CHECK-NEXT:        scf.yield %{{[0-9]+}}, %{{[0-9]+}},
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

// -----

// Documents with a causal conjunct: hi(i) = i per row. A masked step
// branches on the tile's id runs: where its rows are one block of the
// least id then one of the greatest (one document, or two) and each id's
// keys are one run, each row keeps [its run's first, min(i, its run's
// last)], the run chosen by the row's place before or after the split (no
// id read, no 64-bit comparison); otherwise the ids of the row and of the
// column (each read once per step) are compared per score.
// CHECK-LABEL: gpu.func @documents_causal
// CHECK:       scf.for {{.*}} -> (f32
// CHECK:         scf.if %{{.*}} -> (f32
// CHECK:           %[[HI:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK-NEXT:      %[[BEFORE:.*]] = arith.cmpi ult, %[[ROW]], %{{.*}} : i32
// CHECK-NEXT:      %[[F32:.*]] = arith.select %[[BEFORE]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:      %[[F:.*]] = arith.index_cast %[[F32]] : i32 to index
// CHECK-NEXT:      %[[L32:.*]] = arith.select %[[BEFORE]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:      %[[L:.*]] = arith.index_cast %[[L32]] : i32 to index
// CHECK-NEXT:      arith.minsi %[[HI]], %[[L]] : index
// CHECK-NEXT:      arith.maxsi %[[F]], %{{.*}} : index
// CHECK-NOT:       arith.cmpi eq, {{.*}} : i64
// CHECK:           %[[GE:.*]] = arith.cmpi sle, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK-NEXT:      %[[LE:.*]] = arith.cmpi sle, %c0_i32{{.*}}, %{{.*}} : i32
// CHECK-NEXT:      %[[IN:.*]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK-NEXT:      arith.select %[[IN]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT:       arith.cmpi eq, {{.*}} : i64
// CHECK:         } else {
// CHECK:           %[[HIMAX:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[CL:.*]] = arith.minsi %[[HIMAX]], %{{.*}} : index
// CHECK-NEXT:      %[[REL:.*]] = arith.subi %[[CL]], %{{.*}} : index
// CHECK-NEXT:      %[[LAST32:.*]] = arith.index_cast %[[REL]] : index to i32
// CHECK-NEXT:      %[[LAST:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %[[LAST32]]
// CHECK:           %[[LE2:.*]] = arith.cmpi sle, %c0_i32{{.*}}, %[[LAST]] : i32
// CHECK:           %[[SAME:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:      %[[KEEP:.*]] = arith.andi %[[LE2]], %[[SAME]] : i1
// CHECK-NEXT:      arith.select %[[KEEP]], %{{.*}}, %{{.*}} : f32
// CHECK:       gpu.return
func.func @documents_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x?xi64>, %dk: tensor<?x?xi64>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %dq[%b, %i] : tensor<?x?xi64>
        %y = tensor.extract %dk[%b, %j] : tensor<?x?xi64>
        %same = arith.cmpi eq, %x, %y : i64
        %c = arith.cmpi sle, %j, %i : index
        %keep = arith.andi %same, %c : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// No interval form: the region per score, on 64-bit positions.
// CHECK-LABEL: gpu.func @symmetric
// CHECK:       scf.for {{.*}} -> (f32
// CHECK-NOT:     arith.cmpi sle, %{{.*}}, %c{{.*}}_i32{{.*}} : i32
// CHECK:         %[[A:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:         %[[KEEP:.*]] = arith.cmpi sle, %[[A]], %c256{{.*}} : index
// CHECK:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:       gpu.return
func.func @symmetric(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 256 : index
    %z = arith.constant 0 : index
    %d = arith.subi %i, %j : index
    %n = arith.subi %z, %d : index
    %a = arith.maxsi %d, %n : index
    %keep = arith.cmpi sle, %a, %w : index
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// Causal (top-left) as attnc writes it, unsigned (which the interval
// analysis does not read; both sides are non-negative): hi(i) = i, at most
// Skv - 1; per score one 32-bit comparison, no 64-bit j <= i left in the
// masked loop.
// CHECK-LABEL: gpu.func @causal
// CHECK:       scf.for {{.*}} -> (f32
// CHECK:       scf.for {{.*}} -> (f32
// CHECK-NOT:     arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK:         %[[HI:.*]] = arith.minsi %{{.*}}, %[[LASTKEY:[^ ]*]] : index
// CHECK-NEXT:    %[[HIMAX:.*]] = arith.maxsi %[[HI]], %[[BELOW:[^ ]*]] : index
// CHECK-NEXT:    %[[HICLAMP:.*]] = arith.minsi %[[HIMAX]], %[[ABOVE:[^ ]*]] : index
// CHECK-NEXT:    %[[HIREL:.*]] = arith.subi %[[HICLAMP]], %[[J0:[^ ]*]] : index
// CHECK-NEXT:    %[[LAST32:.*]] = arith.index_cast %[[HIREL]] : index to i32
// CHECK-NEXT:    %[[LAST:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %[[LAST32]]
// CHECK-NOT:     arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK:         %[[LE:.*]] = arith.cmpi sle, %c0_i32{{.*}}, %[[LAST]] : i32
// CHECK-NEXT:    arith.select %[[LE]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK:       gpu.return
func.func @causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi ule, %j, %i : index
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// Causal bottom-right (j + Sq <= i + Skv): hi(i) = i + (Skv - Sq).
// CHECK-LABEL: gpu.func @causal_bottom_right
// CHECK:       scf.for {{.*}} -> (f32
// CHECK:       scf.for {{.*}} -> (f32
// CHECK-NOT:     arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK:         %[[SHIFT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:         %[[BR:.*]] = arith.addi %{{.*}}, %[[SHIFT]] : index
// CHECK-NEXT:    %[[HI:.*]] = arith.minsi %[[BR]], %{{.*}} : index
// CHECK-NEXT:    %[[HIMAX:.*]] = arith.maxsi %[[HI]], %{{.*}} : index
// CHECK-NEXT:    %[[HICLAMP:.*]] = arith.minsi %[[HIMAX]], %{{.*}} : index
// CHECK-NEXT:    %[[HIREL:.*]] = arith.subi %[[HICLAMP]], %{{.*}} : index
// CHECK-NEXT:    %[[LAST32:.*]] = arith.index_cast %[[HIREL]] : index to i32
// CHECK-NEXT:    %[[LAST:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %[[LAST32]]
// CHECK:         %[[LE:.*]] = arith.cmpi sle, %c0_i32{{.*}}, %[[LAST]] : i32
// CHECK-NEXT:    arith.select %[[LE]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK:       gpu.return
func.func @causal_bottom_right(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x64xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x64xbf16>
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %a = arith.addi %j, %sq : index
    %c = arith.addi %i, %skv : index
    %keep = arith.cmpi ule, %a, %c : index
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// Prefix-LM (keys j <= i or j < 100): hi(i) = max(i, 99) per row.
// CHECK-LABEL: gpu.func @prefix
// CHECK:       scf.for {{.*}} -> (f32
// CHECK:       scf.for {{.*}} -> (f32
// CHECK-NOT:     arith.cmpi slt, %{{.*}}, %c100{{.*}} : index
// CHECK:         %[[P:.*]] = arith.addi %c100{{.*}}, %c-1{{.*}} : index
// CHECK-NEXT:    %[[HI:.*]] = arith.maxsi %{{.*}}, %[[P]] : index
// CHECK-NEXT:    %[[HIB:.*]] = arith.minsi %[[HI]], %{{.*}} : index
// CHECK-NEXT:    %[[HIMAX:.*]] = arith.maxsi %[[HIB]], %{{.*}} : index
// CHECK-NEXT:    %[[HICLAMP:.*]] = arith.minsi %[[HIMAX]], %{{.*}} : index
// CHECK-NEXT:    %[[HIREL:.*]] = arith.subi %[[HICLAMP]], %{{.*}} : index
// CHECK-NEXT:    %[[LAST32:.*]] = arith.index_cast %[[HIREL]] : index to i32
// CHECK-NEXT:    %[[LAST:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %[[LAST32]]
// CHECK:         %[[LE:.*]] = arith.cmpi sle, %c0_i32{{.*}}, %[[LAST]] : i32
// CHECK-NEXT:    arith.select %[[LE]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     arith.cmpi slt, %{{.*}}, %c100{{.*}} : index
// CHECK:       gpu.return
func.func @prefix(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 100 : index
    %c = arith.cmpi sle, %j, %i : index
    %in = arith.cmpi slt, %j, %p : index
    %keep = arith.ori %c, %in : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}
