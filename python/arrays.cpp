#include "python/arrays.h"

#include "python/bindings.h"

namespace fusor::py {

namespace {

// numpy's dtype for each element type; false where numpy has none (bfloat16, strings).
bool numpy_dtype(ElementType t, pyb::dtype& out) {
  switch (t) {
    case ElementType::Float: out = pyb::dtype::of<float>(); return true;
    case ElementType::Double: out = pyb::dtype::of<double>(); return true;
    case ElementType::Float16: out = pyb::dtype("f2"); return true;
    case ElementType::Int8: out = pyb::dtype::of<int8_t>(); return true;
    case ElementType::Int16: out = pyb::dtype::of<int16_t>(); return true;
    case ElementType::Int32: out = pyb::dtype::of<int32_t>(); return true;
    case ElementType::Int64: out = pyb::dtype::of<int64_t>(); return true;
    case ElementType::UInt8: out = pyb::dtype::of<uint8_t>(); return true;
    case ElementType::UInt16: out = pyb::dtype::of<uint16_t>(); return true;
    case ElementType::UInt32: out = pyb::dtype::of<uint32_t>(); return true;
    case ElementType::UInt64: out = pyb::dtype::of<uint64_t>(); return true;
    case ElementType::Bool: out = pyb::dtype::of<bool>(); return true;
    default: return false;
  }
}

bool element_type_of(const pyb::dtype& dt, ElementType& out) {
  char kind = dt.kind();
  size_t size = static_cast<size_t>(dt.itemsize());
  if (kind == 'b' && size == 1) { out = ElementType::Bool; return true; }
  if (kind == 'f') {
    if (size == 2) { out = ElementType::Float16; return true; }
    if (size == 4) { out = ElementType::Float; return true; }
    if (size == 8) { out = ElementType::Double; return true; }
    return false;
  }
  if (kind == 'i' || kind == 'u') {
    static const ElementType s[] = {ElementType::Int8, ElementType::Int16, ElementType::Int32, ElementType::Int64};
    static const ElementType u[] = {ElementType::UInt8, ElementType::UInt16, ElementType::UInt32, ElementType::UInt64};
    int i = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    if (i < 0) return false;
    out = kind == 'i' ? s[i] : u[i];
    return true;
  }
  return false;
}

}  // namespace

// numpy's name of an element type ("float32"), for messages.
std::string numpy_name(ElementType t) {
  pyb::dtype dt;
  return numpy_dtype(t, dt) ? std::string(pyb::str(dt)) : std::string(element_type_name(t));
}

HostTensor input_tensor(const std::string& name, const pyb::handle& value, pyb::array& keep,
                        const TensorInfo* expected, std::string* hint) {
  auto numpy = [](const char* fn) { return pyb::module_::import("numpy").attr(fn); };
  pyb::array arr = pyb::isinstance<pyb::array>(value) ? pyb::reinterpret_borrow<pyb::array>(value)
                                                       : pyb::array(numpy("asarray")(value));
  ElementType type;
  if (!element_type_of(arr.dtype(), type))
    raise(ErrorCode::InvalidArgument,
          "input '" + name + "': numpy dtype " + std::string(pyb::str(arr.dtype())) +
              " is not supported (numeric and bool tensors only)");
  if (hint && expected && expected->element_type != ElementType::Undefined && expected->element_type != type) {
    const bool from_list = !pyb::isinstance<pyb::array>(value);
    const std::string got = numpy_name(type), want = numpy_name(expected->element_type);
    std::string how = from_list ? "a Python " + std::string(pyb::str(value.get_type().attr("__name__"))) +
                                      " becomes " + got
                                : "a " + got + " array";
    if (type == ElementType::Double) how = from_list ? "a Python list of floats becomes float64" : "a float64 array";
    *hint = "got " + got + " (" + how + "); the model expects " + want +
            ": convert it with numpy.asarray(x, dtype=numpy." + want + ")";
  }
  bool native = arr.dtype().attr("isnative").cast<bool>();
  bool borrowable = native && (arr.flags() & pyb::array::c_style) && (arr.flags() & pyb::detail::npy_api::NPY_ARRAY_ALIGNED_);
  if (!borrowable) {
    pyb::object dt = native ? pyb::object(arr.dtype()) : arr.dtype().attr("newbyteorder")("=");
    arr = pyb::array(numpy("ascontiguousarray")(arr, dt));
  }
  keep = arr;
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  return HostTensor::borrow(type, std::move(shape), const_cast<void*>(arr.data()), static_cast<size_t>(arr.nbytes()));
}

pyb::array output_array(HostTensor&& t) {
  pyb::dtype dt;
  if (!numpy_dtype(t.element_type(), dt))
    raise(ErrorCode::Fail, std::string("an output of type ") + element_type_name(t.element_type()) +
                                                 " has no numpy dtype");
  std::vector<pyb::ssize_t> shape(t.shape().begin(), t.shape().end());
  auto* owned = new HostTensor(std::move(t));
  pyb::capsule base(owned, [](void* p) { delete static_cast<HostTensor*>(p); });
  return pyb::array(dt, shape, {}, owned->data(), base);
}

}  // namespace fusor::py
