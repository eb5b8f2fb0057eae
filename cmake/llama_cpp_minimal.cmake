# Included by llama.cpp's own project() (CMAKE_PROJECT_llama.cpp_INCLUDE, set in the Makefile) while
# llama-cpp-python builds it. llama-cpp-python forces LLAMA_BUILD_COMMON=ON in the cache, which builds
# llama.cpp's "common" library and the cpp-httplib HTTP library with it; the Python package loads neither
# (it loads libllama and libggml through ctypes). A normal variable shadows the cached one in llama.cpp's
# directory scope (policy CMP0077: option() then leaves it alone), so only ggml and llama compile.
set(LLAMA_BUILD_COMMON OFF)
