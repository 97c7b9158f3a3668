//===- AmpModule.cpp - the amp_mlir._amp_mlir extension -------------------===//
//
// nanobind over amp's embedding API (include/amp/API): this file sees no
// LLVM or MLIR type, which is what lets it be compiled with RTTI and
// exceptions against libraries built without them. The Python-facing API
// (docstrings, keyword arguments, the Report) is amp_mlir/__init__.py.
//
//===----------------------------------------------------------------------===//

#include "amp/API/Amp.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>

namespace nb = nanobind;
using namespace nb::literals;
namespace api = amp::api;
using amp_runtime::ElementType;
using amp_runtime::Tensor;

namespace {

/// Raises amp_mlir.AmpError with the call's diagnostics if it failed.
void check(const api::Status &status) {
  if (status.ok)
    return;
  nb::module_ errors = nb::module_::import_("amp_mlir._errors");
  nb::list diagnostics;
  for (const api::Diagnostic &d : status.diagnostics)
    diagnostics.append(errors.attr("Diagnostic")(
        "severity"_a = d.severity, "message"_a = d.message,
        "location"_a = d.location, "file"_a = d.file, "line"_a = d.line,
        "column"_a = d.column, "node"_a = d.node, "op"_a = d.op));
  nb::object error = errors.attr("AmpError")(status.message(), diagnostics);
  PyErr_SetObject(error.type().ptr(), error.ptr());
  throw nb::python_error();
}

/// A reference to a Python object that may be released on any thread
/// (MLIR drops weight blobs while passes run without the GIL).
std::shared_ptr<const void> keepAlive(nb::handle object) {
  PyObject *raw = object.ptr();
  Py_INCREF(raw);
  return std::shared_ptr<const void>(raw, [](const void *pointer) {
#if PY_VERSION_HEX >= 0x030D0000
    if (!Py_IsInitialized() || Py_IsFinalizing())
#else
    if (!Py_IsInitialized() || _Py_IsFinalizing())
#endif
      return; // the interpreter is going away: nothing to release
    nb::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject *>(const_cast<void *>(pointer)));
  });
}

/// Option values from Python: bool, int, float, str or a list of str.
api::OptionList toOptions(nb::handle items) {
  api::OptionList options;
  for (nb::handle item : items) {
    auto pair = nb::cast<std::pair<std::string, nb::object>>(item);
    nb::handle value = pair.second;
    api::OptionValue converted;
    if (PyBool_Check(value.ptr()))
      converted = nb::cast<bool>(value);
    else if (PyLong_Check(value.ptr()))
      converted = nb::cast<int64_t>(value);
    else if (PyFloat_Check(value.ptr()))
      converted = nb::cast<double>(value);
    else if (PyUnicode_Check(value.ptr()))
      converted = nb::cast<std::string>(value);
    else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()))
      converted = nb::cast<std::vector<std::string>>(value);
    else
      throw nb::type_error(("option '" + pair.first +
                            "': expected a bool, int, float, str or a list "
                            "of str")
                               .c_str());
    options.emplace_back(pair.first, std::move(converted));
  }
  return options;
}

const char *dtypeName(ElementType type) {
  switch (type) {
  case ElementType::F64:
    return "float64";
  case ElementType::F32:
    return "float32";
  case ElementType::F16:
    return "float16";
  case ElementType::BF16:
    return "bfloat16";
  case ElementType::Bool:
    return "bool";
  case ElementType::I8:
    return "int8";
  case ElementType::I16:
    return "int16";
  case ElementType::I32:
    return "int32";
  case ElementType::I64:
    return "int64";
  case ElementType::U8:
    return "uint8";
  case ElementType::U16:
    return "uint16";
  case ElementType::U32:
    return "uint32";
  case ElementType::U64:
    return "uint64";
  case ElementType::F8E4M3FN:
    return "float8_e4m3fn";
  case ElementType::F8E4M3FNUZ:
    return "float8_e4m3fnuz";
  case ElementType::F8E5M2:
    return "float8_e5m2";
  case ElementType::F8E5M2FNUZ:
    return "float8_e5m2fnuz";
  case ElementType::I4:
    return "int4";
  case ElementType::U4:
    return "uint4";
  case ElementType::I2:
    return "int2";
  case ElementType::U2:
    return "uint2";
  }
  return "?";
}

nb::dlpack::dtype dlpackOf(ElementType type) {
  using nb::dlpack::dtype_code;
  auto make = [](dtype_code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code),
                             static_cast<uint8_t>(bits), 1};
  };
  switch (type) {
  case ElementType::F64:
    return make(dtype_code::Float, 64);
  case ElementType::F32:
    return make(dtype_code::Float, 32);
  case ElementType::F16:
    return make(dtype_code::Float, 16);
  case ElementType::BF16:
    return make(dtype_code::Float, 32); // as f32
  case ElementType::Bool:
    return make(dtype_code::Bool, 8);
  case ElementType::I8:
    return make(dtype_code::Int, 8);
  case ElementType::I16:
    return make(dtype_code::Int, 16);
  case ElementType::I32:
    return make(dtype_code::Int, 32);
  case ElementType::I64:
    return make(dtype_code::Int, 64);
  case ElementType::U8:
    return make(dtype_code::UInt, 8);
  case ElementType::U16:
    return make(dtype_code::UInt, 16);
  case ElementType::U32:
    return make(dtype_code::UInt, 32);
  case ElementType::U64:
    return make(dtype_code::UInt, 64);
  default: // the carrier of a storage type (toArray converts first)
    return dlpackOf(amp_runtime::getCarrierType(type));
  }
}

std::optional<ElementType> elementTypeOf(nb::dlpack::dtype dtype) {
  using nb::dlpack::dtype_code;
  if (dtype.lanes != 1)
    return std::nullopt;
  switch (static_cast<dtype_code>(dtype.code)) {
  case dtype_code::Float:
    if (dtype.bits == 64)
      return ElementType::F64;
    if (dtype.bits == 32)
      return ElementType::F32;
    if (dtype.bits == 16)
      return ElementType::F16;
    return std::nullopt;
  case dtype_code::Bool:
    return ElementType::Bool;
  case dtype_code::Int:
    if (dtype.bits == 8)
      return ElementType::I8;
    if (dtype.bits == 16)
      return ElementType::I16;
    if (dtype.bits == 32)
      return ElementType::I32;
    if (dtype.bits == 64)
      return ElementType::I64;
    return std::nullopt;
  case dtype_code::UInt:
    if (dtype.bits == 8)
      return ElementType::U8;
    if (dtype.bits == 16)
      return ElementType::U16;
    if (dtype.bits == 32)
      return ElementType::U32;
    if (dtype.bits == 64)
      return ElementType::U64;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

using Array = nb::ndarray<nb::numpy, nb::c_contig, nb::device::cpu>;

/// A C-contiguous numpy array as a host tensor (one copy). The shape is
/// read from the array object (a 0-d array stays rank 0).
Tensor toTensor(nb::handle object, size_t index) {
  Array array = nb::cast<Array>(object);
  std::optional<ElementType> type = elementTypeOf(array.dtype());
  if (!type)
    throw nb::type_error(
        ("argument " + std::to_string(index) + ": unsupported dtype").c_str());
  Tensor tensor;
  tensor.elementType = *type;
  for (nb::handle size : nb::cast<nb::tuple>(object.attr("shape")))
    tensor.shape.push_back(nb::cast<int64_t>(size));
  tensor.bytes.resize(array.nbytes());
  if (array.nbytes())
    std::memcpy(tensor.bytes.data(), array.data(), array.nbytes());
  return tensor;
}

/// A host tensor as a numpy array that owns it (no copy; bf16 and the 8-bit
/// floats become float32, the 4- and 2-bit integers int8/uint8, as numpy
/// has none of them).
nb::object toArray(Tensor tensor) {
  if (amp_runtime::getCarrierType(tensor.elementType) != tensor.elementType)
    tensor = amp_runtime::toCarrierType(tensor);
  nb::dlpack::dtype dtype = dlpackOf(tensor.elementType);
  auto *owned = new Tensor(std::move(tensor));
  nb::capsule owner(owned,
                    [](void *p) noexcept { delete static_cast<Tensor *>(p); });
  std::vector<size_t> shape(owned->shape.begin(), owned->shape.end());
  return nb::cast(nb::ndarray<nb::numpy>(owned->bytes.data(), shape.size(),
                                         shape.data(), owner, nullptr, dtype));
}

nb::list describeTensors(const std::vector<api::TensorInfo> &infos) {
  nb::list list;
  for (const api::TensorInfo &info : infos) {
    nb::list shape;
    for (int64_t size : info.shape)
      shape.append(size < 0 ? nb::object(nb::none())
                            : nb::object(nb::int_(size)));
    list.append(nb::make_tuple(info.name, dtypeName(info.elementType),
                               nb::tuple(shape)));
  }
  return list;
}

api::ImportOptions importOptions(bool foldConstants, nb::handle limits) {
  api::ImportOptions options;
  options.foldConstants = foldConstants;
  options.limits = toOptions(limits);
  return options;
}

} // namespace

NB_MODULE(_amp_mlir, m) {
  m.doc() = "amp's native layer (use the amp_mlir package, not this module)";

  nb::class_<api::Program>(m, "Program")
      .def_prop_ro(
          "inputs",
          [](const api::Program &p) { return describeTensors(p.getInputs()); })
      .def_prop_ro(
          "outputs",
          [](const api::Program &p) { return describeTensors(p.getOutputs()); })
      .def("run", [](const api::Program &program, nb::list arrays) {
        std::vector<Tensor> inputs;
        for (size_t i = 0; i < arrays.size(); ++i)
          inputs.push_back(toTensor(arrays[i], i));
        std::vector<Tensor> results;
        api::Status status;
        {
          nb::gil_scoped_release release;
          status = program.run(std::move(inputs), results);
        }
        check(status);
        nb::list outputs;
        for (Tensor &result : results)
          outputs.append(toArray(std::move(result)));
        return outputs;
      });

  nb::class_<api::Trainer>(m, "Trainer")
      .def_prop_ro("batch_inputs",
                   [](const api::Trainer &t) {
                     return describeTensors(t.getBatchInputs());
                   })
      .def_prop_ro("steps", &api::Trainer::getStepCount)
      .def("step",
           [](api::Trainer &trainer, nb::handle x, nb::handle y) {
             Tensor input = toTensor(x, 0), labels = toTensor(y, 1);
             api::StepResult result;
             api::Status status;
             {
               nb::gil_scoped_release release;
               status =
                   trainer.step(std::move(input), std::move(labels), result);
             }
             check(status);
             return nb::make_tuple(result.loss, result.lossScale,
                                   result.skipped, result.lr);
           })
      .def("predict",
           [](const api::Trainer &trainer, nb::handle x) {
             Tensor input = toTensor(x, 0);
             std::vector<Tensor> outputs;
             api::Status status;
             {
               nb::gil_scoped_release release;
               status = trainer.predict(std::move(input), outputs);
             }
             check(status);
             nb::list list;
             for (Tensor &output : outputs)
               list.append(toArray(std::move(output)));
             return list;
           })
      .def("state",
           [](const api::Trainer &trainer) {
             nb::dict dict;
             for (auto &[name, tensor] : trainer.getState())
               dict[nb::str(name.c_str())] = toArray(std::move(tensor));
             return dict;
           })
      .def("set_state",
           [](api::Trainer &trainer, nb::dict given) {
             api::NamedTensors state;
             size_t index = 0;
             for (auto [name, value] : given)
               state.emplace_back(nb::cast<std::string>(name),
                                  toTensor(value, index++));
             check(trainer.setState(state));
           })
      .def("export_onnx",
           [](const api::Trainer &trainer, const std::string &path) {
             check(trainer.exportOnnx(path));
           });

  m.def("build_train_step", [](const api::Module &module, nb::handle options,
                               int64_t accumulate) {
    api::OptionList list = toOptions(options);
    api::Trainer trainer;
    api::Status status;
    {
      nb::gil_scoped_release release;
      status = api::Trainer::build(module, list, accumulate, trainer);
    }
    check(status);
    return trainer;
  });

  nb::class_<api::Module>(m, "Module")
      .def_prop_ro("from_onnx", &api::Module::isFromOnnx)
      .def_prop_ro("from_torch", &api::Module::isFromTorch)
      .def_prop_ro("autocast_type", &api::Module::getAutocastType)
      .def("clone", &api::Module::clone)
      .def("autocast",
           [](api::Module &module, nb::handle options) {
             std::string report;
             check(module.autocast(toOptions(options), report));
             return report;
           })
      .def(
          "to_mlir",
          [](const api::Module &module, bool generic) {
            std::string text;
            check(module.toMlirText(text, generic));
            return text;
          },
          "generic"_a = false)
      .def("write_bytecode",
           [](const api::Module &module, const std::string &path) {
             check(module.writeBytecode(path));
           })
      .def("write_onnx",
           [](const api::Module &module, const std::string &path,
              int64_t opset) { check(module.writeOnnx(path, opset)); })
      .def("onnx_bytes",
           [](const api::Module &module, int64_t opset) {
             std::string bytes;
             check(module.toOnnxBytes(bytes, opset));
             return nb::bytes(bytes.data(), bytes.size());
           })
      .def("check_numerics",
           [](const api::Module &module, nb::handle autocastOptions,
              nb::handle reportOptions, nb::list arrays) {
             api::OptionList autocast = toOptions(autocastOptions);
             api::OptionList report = toOptions(reportOptions);
             std::vector<Tensor> inputs;
             for (size_t i = 0; i < arrays.size(); ++i)
               inputs.push_back(toTensor(arrays[i], i));
             std::string json;
             std::vector<Tensor> results;
             api::Status status;
             {
               nb::gil_scoped_release release;
               status = module.checkNumerics(autocast, report,
                                             std::move(inputs), json, results);
             }
             check(status);
             nb::list outputs;
             for (Tensor &result : results)
               outputs.append(toArray(std::move(result)));
             return nb::make_tuple(json, outputs);
           })
      .def("compile", [](const api::Module &module, const std::string &target) {
        api::Program program;
        api::Status status;
        {
          nb::gil_scoped_release release;
          status = module.compile(target, program);
        }
        check(status);
        return program;
      });

  m.def("import_onnx_file",
        [](const std::string &path, bool foldConstants, nb::handle limits) {
          api::ImportOptions options = importOptions(foldConstants, limits);
          api::Module module;
          api::Status status;
          {
            nb::gil_scoped_release release;
            status = api::Module::importOnnxFile(path, options, module);
          }
          check(status);
          return module;
        });
  m.def("import_onnx_bytes", [](nb::bytes bytes, const std::string &name,
                                bool foldConstants, nb::handle limits) {
    api::ImportOptions options = importOptions(foldConstants, limits);
    std::string data(bytes.c_str(), bytes.size());
    api::Module module;
    api::Status status;
    {
      nb::gil_scoped_release release;
      status = api::Module::importOnnxBytes(data, name, options, module);
    }
    check(status);
    return module;
  });
  m.def(
      "import_torch_graph",
      [](const std::string &json, nb::handle weights, bool training) {
        // (state-dict name, address, byte size, owner) per weight: the
        // owner (the torch tensor) keeps the memory alive without a copy.
        std::vector<api::ExternalWeight> list;
        for (nb::handle item : weights) {
          auto entry = nb::cast<nb::tuple>(item);
          if (entry.size() != 4)
            throw nb::value_error("a weight is (name, address, bytes, owner)");
          api::ExternalWeight weight;
          weight.name = nb::cast<std::string>(entry[0]);
          weight.data = reinterpret_cast<const void *>(
              nb::cast<uintptr_t>(entry[1]));
          weight.bytes = nb::cast<size_t>(entry[2]);
          weight.owner = keepAlive(entry[3]);
          list.push_back(std::move(weight));
        }
        api::Module module;
        api::Status status;
        {
          nb::gil_scoped_release release;
          status =
              api::Module::importTorchGraph(json, list, training, module);
          list.clear(); // drops the owners the module does not hold
        }
        check(status);
        return module;
      },
      "graph_json"_a, "weights"_a, "training"_a = false);
  m.def("supported_aten_ops", [] {
    nb::list list;
    for (const api::AtenOpInfo &info : api::supportedAtenOps())
      list.append(nb::make_tuple(info.target, info.ampOps));
    return list;
  });
  m.def("parse_mlir_file", [](const std::string &path) {
    api::Module module;
    check(api::Module::parseMlirFile(path, module));
    return module;
  });
  m.def("parse_mlir_text",
        [](const std::string &text, const std::string &name) {
          api::Module module;
          check(api::Module::parseMlirText(text, name, module));
          return module;
        });
  m.def("report_html",
        [](const std::string &json) { return api::renderReportHtml(json); });
  m.def("describe_options", [](const std::string &set) {
    api::OptionSet which;
    if (set == "front-end")
      which = api::OptionSet::FrontEnd;
    else if (set == "import-limits")
      which = api::OptionSet::ImportLimits;
    else if (set == "train-step")
      which = api::OptionSet::TrainStep;
    else
      throw nb::value_error("unknown option set");
    nb::list list;
    for (const api::OptionInfo &info : api::describeOptions(which)) {
      nb::dict d;
      d["name"] = info.name;
      d["description"] = info.description;
      d["kind"] = info.kind;
      d["default"] = info.defaultValue;
      d["choices"] = info.choices;
      list.append(d);
    }
    return list;
  });
}
