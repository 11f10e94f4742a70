/**
 * A minimal ONNX graph builder over `onnx-proto` (protobufjs static code for ONNX IR 8): named initializers with
 * little-endian `raw_data`, nodes with int / ints attributes, and typed graph inputs and outputs.
 */

import onnxProto from "onnx-proto";
import type { onnx as Onnx } from "onnx-proto";

const { onnx } = onnxProto;

export const IR_VERSION = 8;
export const OPSET_VERSION = 17;

const { FLOAT, INT64 } = onnx.TensorProto.DataType;
export type ElemType = typeof FLOAT | typeof INT64;
export { FLOAT, INT64 };

/** A symbolic dim (e.g. "batch_size") or a fixed size. */
export type Dim = string | number;

// raw_data is little-endian by the ONNX spec; typed arrays use the platform's order, little-endian everywhere we run.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function rawBytes(data: Float32Array | BigInt64Array): Uint8Array {
  if (!LITTLE_ENDIAN) throw new Error("the ONNX builder needs a little-endian platform");
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function valueInfo(name: string, elemType: ElemType, dims: readonly Dim[]): Onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

export class OnnxGraphBuilder {
  private readonly nodes: Onnx.INodeProto[] = [];
  private readonly initializers: Onnx.ITensorProto[] = [];
  private readonly inputs: Onnx.IValueInfoProto[] = [];
  private readonly outputs: Onnx.IValueInfoProto[] = [];
  private readonly constants = new Map<string, string>();
  private counter = 0;

  input(name: string, elemType: ElemType, dims: readonly Dim[]): string {
    this.inputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  output(name: string, elemType: ElemType, dims: readonly Dim[]): void {
    this.outputs.push(valueInfo(name, elemType, dims));
  }

  floatTensor(name: string, dims: readonly number[], data: Float32Array): string {
    if (data.length !== dims.reduce((a, b) => a * b, 1)) throw new Error(`initializer ${name}: size/shape mismatch`);
    this.initializers.push({ name, dims: [...dims], dataType: FLOAT, rawData: rawBytes(data) });
    return name;
  }

  int64Tensor(name: string, dims: readonly number[], values: readonly number[]): string {
    const data = BigInt64Array.from(values, (v) => BigInt(v));
    this.initializers.push({ name, dims: [...dims], dataType: INT64, rawData: rawBytes(data) });
    return name;
  }

  /** A shared int64 constant (a vector, or a scalar when `scalar`), created once per distinct value. */
  ints(values: readonly number[], scalar = false): string {
    const key = `i64:${scalar ? "s" : "v"}:${values.join(",")}`;
    let name = this.constants.get(key);
    if (!name) {
      name = `const.i64_${scalar ? "scalar" : "vec"}_${values.join("_").replace(/-/g, "m")}`;
      this.int64Tensor(name, scalar ? [] : [values.length], values);
      this.constants.set(key, name);
    }
    return name;
  }

  /** A shared float32 scalar constant. */
  float(value: number, label: string): string {
    const key = `f32:${label}`;
    let name = this.constants.get(key);
    if (!name) {
      name = `const.f32_${label}`;
      this.floatTensor(name, [], Float32Array.of(value));
      this.constants.set(key, name);
    }
    return name;
  }

  /** Adds a node and returns its (single) output name; numbers become INT attributes, arrays INTS. */
  node(opType: string, inputs: readonly string[], attrs: Record<string, number | readonly number[]> = {}, output?: string): string {
    const id = this.counter++;
    const out = output ?? `${opType.toLowerCase()}_${id}`;
    const attribute: Onnx.IAttributeProto[] = Object.entries(attrs).map(([name, v]) =>
      typeof v === "number"
        ? { name, type: onnx.AttributeProto.AttributeType.INT, i: v }
        : { name, type: onnx.AttributeProto.AttributeType.INTS, ints: [...v] },
    );
    this.nodes.push({ name: `${opType}_${id}`, opType, input: [...inputs], output: [out], attribute });
    return out;
  }

  get nodeCount(): number {
    return this.nodes.length;
  }

  /** Serialises a ModelProto: IR 8, the default ai.onnx domain at opset 17. */
  encode(graphName: string, producerVersion: string): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: IR_VERSION,
      opsetImport: [{ domain: "", version: OPSET_VERSION }],
      producerName: "rollout-lab",
      producerVersion,
      graph: {
        name: graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}
