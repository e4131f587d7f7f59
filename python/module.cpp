// fusor._fusor: the compiled half of the `fusor` Python package (python/fusor/__init__.py is the
// other half, with ONNX Runtime's InferenceSession on top of _Session).
#include "python/bindings.h"

#include "fusor/options.h"

PYBIND11_MODULE(_fusor, m) {
  m.doc() = "fusor's library API (include/fusor) for Python; import the `fusor` package instead";
  fusor::py::bind_errors(m);
  fusor::py::bind_options(m);
  fusor::py::bind_session(m);
  fusor::py::bind_rules(m);
  m.def("version", [] { return std::string(fusor::version()); }, "the engine version");
  m.def("fusor_providers", &fusor::available_providers, "fusor's own names of the providers this build has");
}
