// Every example parses, verifies and prints back to something that parses to
// the same IR (checked by printing twice and comparing the generic forms).
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir | attnc-opt | FileCheck %s --check-prefix=ATTN
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir | attnc-opt | FileCheck %s --check-prefix=CHAIN
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir -mlir-print-op-generic > %t.a.mlir
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir | attnc-opt -mlir-print-op-generic > %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir -mlir-print-op-generic > %t.c.mlir
// RUN: attnc-opt %attnc_src_root/examples/elementwise_chain.mlir | attnc-opt -mlir-print-op-generic > %t.d.mlir
// RUN: diff %t.c.mlir %t.d.mlir

// ATTN-LABEL: func.func @naive_attention
// ATTN: attnc.matmul %{{.*}}, %{{.*}} {transpose_b}
// ATTN: attnc.cmp ge
// ATTN: attnc.select
// ATTN: attnc.softmax
// ATTN: attnc.matmul

// CHAIN-LABEL: func.func @bias_dropout_layernorm
// CHAIN: attnc.add
// CHAIN: attnc.dropout %{{.*}}, %{{.*}}, %{{.*}} {probability = 1.000000e-01 : f64}
// CHAIN: attnc.layer_norm
