# DevProc.cmake: devproc_add_pipeline() adds a DevProc pipeline to a CMake
# build, one custom command per stage, and a library target for it.
#
#   list(APPEND CMAKE_MODULE_PATH /path/to/devproc/cmake)   # or include() this file
#   include(DevProc)
#   devproc_add_pipeline(classify PIPELINE classify.dp [TARGET cpu|cuda|FILE]
#                        [OUTPUT_DIR DIR])
#   target_link_libraries(app PRIVATE classify)
#
# NAME becomes an INTERFACE library: linking it adds DIR/libSTEM.a (and -lm;
# cuBLAS, the static CUDA runtime and the C++ runtime for a mapping with a
# cuda device) and the include folder holding STEM.h, and builds the
# pipeline first.  STEM is the .dp file's name
# without .dp; DIR defaults to ${CMAKE_CURRENT_BINARY_DIR}/NAME and holds
# every stage's artifact, as devproc build does (1.import.dpir, weights.bin,
# 2.legalize.dpir, 3.place.dpir, 4.partition.dpir, 5.cpu.c, ..., STEM, libSTEM.a, STEM.h).
#
# Each stage is its own custom command, so Ninja reruns only the stages whose
# inputs changed, and stops where a stage's output did not (CMake's Ninja
# generator marks custom commands restat; the stages write only on change;
# Makefile generators have no restat, so prefer -G Ninja).
# The .pt2 archives a .dp reads come through import's depfile (DEPFILE) where
# the CMake version and generator support it; elsewhere they are read from
# the .dp at configure time, which then reruns when the .dp changes.
#
# Variables: DEVPROC_ROOT (the DevProc folder: bin/, lib/, runtime/,
# targets/; default: the folder above this file's).  After the call,
# NAME_EXECUTABLE, NAME_LIBRARY, NAME_HEADER and NAME_OUTPUT_DIR are set in
# the caller's scope.
if(CMAKE_VERSION VERSION_LESS 3.16)
  message(FATAL_ERROR "DevProc.cmake needs CMake 3.16 or newer (this is ${CMAKE_VERSION})")
endif()
include_guard(GLOBAL)

if(POLICY CMP0116)   # depfiles' relative paths: from the binary dir (where ours run)
  cmake_policy(SET CMP0116 NEW)
endif()

if(NOT DEVPROC_ROOT)
  get_filename_component(DEVPROC_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
get_filename_component(DEVPROC_ROOT "${DEVPROC_ROOT}" ABSOLUTE)
set(DEVPROC_ROOT "${DEVPROC_ROOT}" CACHE PATH "The DevProc folder (bin/, lib/, runtime/, targets/)" FORCE)

if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.17)
  set(_devproc_rm rm -f)
else()
  set(_devproc_rm remove -f)
endif()

# Whether add_custom_command(DEPFILE) works with this generator.
if(CMAKE_GENERATOR MATCHES "Ninja" OR CMAKE_VERSION VERSION_GREATER_EQUAL 3.21 OR
   (CMAKE_VERSION VERSION_GREATER_EQUAL 3.20 AND CMAKE_GENERATOR MATCHES "Makefiles"))
  set(_devproc_depfile TRUE)
else()
  set(_devproc_depfile FALSE)
endif()

# One compile of a pipeline's folder (d, r, w, rt: devproc_add_pipeline's),
# as rules.ninja's: TOOL ARGS... -MMD (its depfile) MODE SRC -o OUT.new, then
# OUT replaced only when the bytes differ, so that an unchanged object stops
# the rebuild.
function(_devproc_compile out src mode comment)
  set(extra)
  if(_devproc_depfile)
    set(extra DEPFILE "${d}/${out}.d")
  endif()
  add_custom_command(OUTPUT "${d}/${out}"
    COMMAND ${ARGN} -MMD -MT "${r}/${out}" -MF "${r}/${out}.d" ${mode} "${r}/${src}"
            -o "${r}/${out}.new"
    COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${r}/${out}.new" "${r}/${out}"
    COMMAND "${CMAKE_COMMAND}" -E ${_devproc_rm} "${r}/${out}.new"
    DEPENDS "${d}/${src}" "${rt}/dprt.h"
    ${extra}
    WORKING_DIRECTORY "${w}" COMMENT "${comment}" VERBATIM)
endfunction()

function(devproc_add_pipeline NAME)
  cmake_parse_arguments(PARSE_ARGV 1 DP "" "PIPELINE;TARGET;OUTPUT_DIR" "")
  if(DP_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "devproc_add_pipeline(${NAME}): unknown arguments: ${DP_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT DP_PIPELINE)
    message(FATAL_ERROR "devproc_add_pipeline(${NAME}): PIPELINE file.dp is required")
  endif()
  if(NOT DP_TARGET)
    set(DP_TARGET cpu)
  endif()
  if(NOT DP_OUTPUT_DIR)
    set(DP_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${NAME}")
  endif()
  get_filename_component(dp "${DP_PIPELINE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(d "${DP_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  get_filename_component(stem "${dp}" NAME)
  string(REGEX REPLACE "\\.dp$" "" stem "${stem}")
  if(NOT stem MATCHES "^[A-Za-z_][A-Za-z0-9_]*$" OR NOT dp MATCHES "\\.dp$")
    message(FATAL_ERROR "devproc_add_pipeline(${NAME}): ${dp}: the file must be NAME.dp with NAME a C identifier")
  endif()
  if(NOT EXISTS "${dp}")
    message(FATAL_ERROR "devproc_add_pipeline(${NAME}): no such pipeline: ${dp}")
  endif()

  # the target mapping: a name under targets/, or a file
  if(DP_TARGET MATCHES "/")
    get_filename_component(map "${DP_TARGET}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  else()
    set(map "${DEVPROC_ROOT}/targets/${DP_TARGET}")
  endif()
  if(NOT EXISTS "${map}")
    message(FATAL_ERROR "devproc_add_pipeline(${NAME}): no target mapping '${DP_TARGET}' (${map}); "
                        "pass a name under ${DEVPROC_ROOT}/targets/ or a mapping file")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${map}")
  file(STRINGS "${map}" cudadev REGEX "^[ \t]*device[ \t]+cuda")
  set(cuda FALSE)
  if(cudadev)
    set(cuda TRUE)
    set(arch sm_90)
    if(cudadev MATCHES "(sm_[0-9]+)")
      set(arch "${CMAKE_MATCH_1}")
    endif()
  endif()

  set(bin "${DEVPROC_ROOT}/bin")
  foreach(tool dp-import dp-verify dp-legalize dp-place dp-partition dp-lower_cpu dp-lower_gpu dp-link)
    if(NOT EXISTS "${bin}/${tool}")
      message(FATAL_ERROR "devproc_add_pipeline(${NAME}): ${bin}/${tool} is missing; "
                          "build DevProc first (./configure && make in ${DEVPROC_ROOT})")
    endif()
  endforeach()
  set(rt "${DEVPROC_ROOT}/runtime")
  set(cc "${CMAKE_C_COMPILER}")
  if(NOT cc)
    set(cc cc)
  endif()
  file(MAKE_DIRECTORY "${d}")

  # Every command runs in the folder above DIR and names the artifacts
  # DIR's name/FILE, as devproc gen's build.ninja does: no absolute build
  # path reaches an object, so the artifacts are the same in any build
  # folder (and equal devproc build's, with the same compiler).
  get_filename_component(w "${d}" DIRECTORY)
  get_filename_component(r "${d}" NAME)

  # import: the .dp and the archives it names -> IR and weight blob
  set(import_extra)
  set(models)
  if(_devproc_depfile)
    set(import_extra DEPFILE "${d}/1.import.d")
  else()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${dp}")
    file(STRINGS "${dp}" calls REGEX "model\\(\"[^\"]+\"")
    get_filename_component(dpdir "${dp}" DIRECTORY)
    foreach(c IN LISTS calls)
      string(REGEX MATCHALL "model\\(\"[^\"]+\"" ms "${c}")
      foreach(m IN LISTS ms)
        string(REGEX REPLACE "^model\\(\"([^\"]+)\"$" "\\1" m "${m}")
        get_filename_component(m "${m}" ABSOLUTE BASE_DIR "${dpdir}")
        list(APPEND models "${m}")
      endforeach()
    endforeach()
  endif()
  add_custom_command(OUTPUT "${d}/1.import.dpir" "${d}/weights.bin"
    COMMAND "${bin}/dp-import" "${dp}" -o "${r}/1.import.dpir" -w "${r}/weights.bin" -d "${r}/1.import.d"
    DEPENDS "${dp}" "${bin}/dp-import" ${models}
    ${import_extra}
    WORKING_DIRECTORY "${w}" COMMENT "DevProc import ${NAME}" VERBATIM)
  add_custom_command(OUTPUT "${d}/2.verify.stamp"
    COMMAND "${bin}/dp-verify" "${r}/1.import.dpir" -o "${r}/2.verify.stamp"
    DEPENDS "${d}/1.import.dpir" "${bin}/dp-verify"
    WORKING_DIRECTORY "${w}" COMMENT "DevProc verify ${NAME}" VERBATIM)
  add_custom_command(OUTPUT "${d}/2.legalize.dpir"
    COMMAND "${bin}/dp-legalize" "${r}/1.import.dpir" -o "${r}/2.legalize.dpir"
    DEPENDS "${d}/1.import.dpir" "${bin}/dp-legalize"
    WORKING_DIRECTORY "${w}" COMMENT "DevProc legalize ${NAME}" VERBATIM)
  add_custom_command(OUTPUT "${d}/3.place.dpir"
    COMMAND "${bin}/dp-place" "${r}/2.legalize.dpir" -t "${map}" -o "${r}/3.place.dpir"
    DEPENDS "${d}/2.legalize.dpir" "${map}" "${bin}/dp-place"
    WORKING_DIRECTORY "${w}" COMMENT "DevProc place ${NAME}" VERBATIM)
  add_custom_command(OUTPUT "${d}/4.partition.dpir"
    COMMAND "${bin}/dp-partition" "${r}/3.place.dpir" -o "${r}/4.partition.dpir"
    DEPENDS "${d}/3.place.dpir" "${bin}/dp-partition"
    WORKING_DIRECTORY "${w}" COMMENT "DevProc partition ${NAME}" VERBATIM)
  add_custom_command(OUTPUT "${d}/5.cpu.c"
    COMMAND "${bin}/dp-lower_cpu" "${r}/4.partition.dpir" -o "${r}/5.cpu.c"
    DEPENDS "${d}/4.partition.dpir" "${bin}/dp-lower_cpu"
    WORKING_DIRECTORY "${w}" COMMENT "DevProc lower_cpu ${NAME}" VERBATIM)

  # the compiles write only on change too (compile to .new, keep the old
  # object when equal), so an unchanged object stops the rebuild
  set(objs "${r}/5.cpu.o")
  set(objdeps "${d}/5.cpu.o")
  _devproc_compile(5.cpu.o 5.cpu.c -c "DevProc cc ${NAME}" "${cc}" -O3 "-I${rt}")

  set(cudalibs)
  set(cudadeps)
  if(cuda)
    # nvcc and the host half's C++ compiler: DevProc's configure's choices
    # where its config.mk is there (so that the objects are devproc build's),
    # else found here
    set(cfgnvcc)
    set(cfgcxx)
    set(cfg "${DEVPROC_ROOT}/config.mk")
    if(EXISTS "${cfg}")
      file(STRINGS "${cfg}" cfgnvcc REGEX "^NVCC = ")
      file(STRINGS "${cfg}" cfgcxx REGEX "^CXX = ")
      string(REGEX REPLACE "^NVCC = " "" cfgnvcc "${cfgnvcc}")
      string(REGEX REPLACE "^CXX = " "" cfgcxx "${cfgcxx}")
    endif()
    if(cfgnvcc AND NOT DEVPROC_NVCC)
      set(DEVPROC_NVCC "${cfgnvcc}" CACHE FILEPATH "nvcc (DevProc's configure's)")
    endif()
    find_program(DEVPROC_NVCC nvcc HINTS "$ENV{CUDA_HOME}/bin" /usr/local/cuda/bin)
    find_package(CUDAToolkit QUIET)
    if(NOT DEVPROC_NVCC OR NOT CUDAToolkit_FOUND)
      message(FATAL_ERROR "devproc_add_pipeline(${NAME}): the mapping ${map} has a cuda device, "
                          "but nvcc or the CUDA toolkit was not found")
    endif()
    add_custom_command(OUTPUT "${d}/5.gpu.cu"
      COMMAND "${bin}/dp-lower_gpu" "${r}/4.partition.dpir" -t "${map}" --arch "${arch}"
              -o "${r}/5.gpu.cu"
      DEPENDS "${d}/4.partition.dpir" "${map}" "${bin}/dp-lower_gpu"
      WORKING_DIRECTORY "${w}" COMMENT "DevProc lower_gpu ${NAME}" VERBATIM)
    # the .cu in two halves side by side, as devproc build compiles it
    # (runtime/cuda/launch.cuh): the kernels by nvcc -fatbin, the host code
    # by the C++ compiler; without one, nvcc -c compiles it whole
    # (-objtemp: intermediates named after the object, not nvcc's process id)
    if(EXISTS "${cfg}")   # (an empty CXX: configure found none, nvcc compiles it whole)
      set(hostcxx "${cfgcxx}")
    else()
      find_program(DEVPROC_CXX NAMES c++ g++)
      set(hostcxx "${DEVPROC_CXX}")
    endif()
    list(GET CUDAToolkit_INCLUDE_DIRS 0 cudainc)
    if(hostcxx)
      _devproc_compile(5.gpu.fatbin 5.gpu.cu -fatbin "DevProc nvcc ${NAME}"
                       "${DEVPROC_NVCC}" "-arch=${arch}" -DDP_DEVICE "-I${rt}")
      _devproc_compile(5.gpu.o 5.gpu.cu -c "DevProc c++ ${NAME}"
                       "${hostcxx}" -O0 -fno-exceptions -fno-rtti -DDP_HOST -x c++ "-I${rt}"
                       "-I${cudainc}")
      list(APPEND objs "${r}/5.gpu.o" "${r}/5.gpu.fatbin")
      list(APPEND objdeps "${d}/5.gpu.o" "${d}/5.gpu.fatbin")
    else()
      _devproc_compile(5.gpu.o 5.gpu.cu -c "DevProc nvcc ${NAME}"
                       "${DEVPROC_NVCC}" -O0 "-arch=${arch}" -objtemp "-I${rt}")
      list(APPEND objs "${r}/5.gpu.o")
      list(APPEND objdeps "${d}/5.gpu.o")
    endif()
    # libSTEM.a holds the CUDA half of the runtime; what it needs besides
    # (as STEM.h says): cuBLAS, the static CUDA runtime, the C++ runtime
    set(cudalibs CUDA::cublas CUDA::cudart_static stdc++)
    set(cudadeps "${DEVPROC_ROOT}/lib/libdprt_cuda.a")
  endif()

  # link: the executable, libSTEM.a and STEM.h
  set(outs "${d}/${stem}" "${d}/lib${stem}.a" "${d}/${stem}.h")
  add_custom_command(OUTPUT ${outs}
    COMMAND "${bin}/dp-link" "${r}/4.partition.dpir" ${objs} --runtime "${DEVPROC_ROOT}/lib"
            --include "${rt}" --cc "${cc}" -o "${r}/${stem}"
    DEPENDS "${d}/4.partition.dpir" ${objdeps} "${d}/weights.bin" "${bin}/dp-link"
            "${DEVPROC_ROOT}/lib/libdprt.a" "${rt}/dprt.h" ${cudadeps}
    WORKING_DIRECTORY "${w}" COMMENT "DevProc link ${NAME}" VERBATIM)

  add_custom_target(${NAME}_devproc ALL DEPENDS ${outs} "${d}/2.verify.stamp")
  add_library(${NAME} INTERFACE)
  target_include_directories(${NAME} INTERFACE "${d}")
  target_link_libraries(${NAME} INTERFACE "${d}/lib${stem}.a" ${cudalibs} m)
  add_dependencies(${NAME} ${NAME}_devproc)

  set(${NAME}_EXECUTABLE "${d}/${stem}" PARENT_SCOPE)
  set(${NAME}_LIBRARY "${d}/lib${stem}.a" PARENT_SCOPE)
  set(${NAME}_HEADER "${d}/${stem}.h" PARENT_SCOPE)
  set(${NAME}_OUTPUT_DIR "${d}" PARENT_SCOPE)
endfunction()
