# check_portability.cmake: fails (listing file:line) if a CPU-dependent arithmetic path can reach
# library code, i.e. anything that could make a verdict or a report differ between x86-64 machines
# (issue #10; numerics.md §2x).
#
#   cmake -DROOT=<source dir> [-DTREES="theory;sim;checks;reports;portable"] [-DLIBM_TREES="theory;sim;portable"]
#         -P check_portability.cmake
#
# C++ sources (*.hpp, *.h, *.cpp, *.cc, *.ipp, *.inl) under ROOT/<tree>, with // comments removed:
#   - long double, __float80, _Float64x, long-double literals (1.0L) and the long-double libm and
#     conversion functions (expl, logl, powl, ..., strtold, std::stold): on x86-64 these are x87
#     80-bit arithmetic, and glibc's x87 expl/logl gave different bits on AMD and Intel CPUs;
#   - rounding-mode and MXCSR changes (fesetround, fesetenv, feupdateenv, FENV_ACCESS, _mm_setcsr,
#     _MM_SET_ROUNDING_MODE / _FLUSH_ZERO_MODE / _DENORMALS_ZERO_MODE);
#   - non-empty inline assembly (an empty asm("" : "+v"(x)) optimisation barrier is allowed);
#   - fast-math in #pragma GCC optimize / __attribute__((optimize(...)));
#   - __attribute__((target(...))) or #pragma GCC target in a tree whose CMakeLists.txt does not
#     compile it with -ffp-contract=off (an AVX-512/FMA target lets GCC contract a*b + c into an FMA,
#     which rounds once instead of twice).
# C++ sources under ROOT/<tree> for the trees in LIBM_TREES (default theory, sim, portable), also:
#   - glibc's double elementary functions: std::exp, std::log, std::pow, std::tanh, ... (calls and
#     `using std::exp;`), global ::exp(...), Eigen's array .exp()/.log()/.tanh()/.pow(...) (Eigen
#     evaluates the elements outside whole packets with std::exp), and Boost.Math special functions
#     (boost::math::erf(...), which call glibc on double). glibc 2.36 picks its exp, log, pow, sin,
#     tanh, ... at load time by CPU features (FMA+AVX2, FMA4 or SSE2 variant) and the variants differ
#     in the last bit: use dyncheck::portable (portable/include/dyncheck/portable/math.hpp) instead.
#     Multiprecision-only code keeps std:: / Boost.Math with a "portability-guard: <reason>" comment.
#     std::sqrt, std::fabs, std::floor, ... are exact or correctly rounded and are not flagged.
# CMake files (ROOT/<tree>/**/CMakeLists.txt and *.cmake, ROOT/CMakeLists.txt, ROOT/cmake/*.cmake,
# ROOT/CMakePresets.json), with # comments removed: -ffast-math, -Ofast, -funsafe-math-optimizations,
# -fassociative-math, -freciprocal-math, -march=, -mavx*, -mfma, -mfpmath=, -mlong-double-*: each
# changes the instructions or the rounding of double arithmetic away from the presets' baseline
# x86-64 build (SSE2 doubles, no FMA contraction), whose results the golden reports pin.
# Strings and /* */ comments are not parsed: a match there is reported too (rephrase it).
# A line whose comment says "portability-guard: <reason>" is skipped: for code that names a
# forbidden type only to refuse it (the static_assert in theory/numeric/scalar.hpp).

cmake_policy(VERSION 3.25)
if(NOT DEFINED ROOT)
  message(FATAL_ERROR "check_portability.cmake: pass -DROOT=<source directory>")
endif()
if(NOT DEFINED TREES)
  set(TREES theory sim checks reports portable)
endif()
if(NOT DEFINED LIBM_TREES)
  set(LIBM_TREES theory sim portable)
endif()

set(violations "")
set(violation_count 0)

# Lines of a file as a CMake list; ; [ ] are replaced first so that list splitting keeps lines whole.
function(read_lines path out)
  file(READ "${path}" content)
  string(REPLACE ";" "<semicolon>" content "${content}")
  string(REPLACE "[" "<lbracket>" content "${content}")
  string(REPLACE "]" "<rbracket>" content "${content}")
  string(REPLACE "\\" "<backslash>" content "${content}")
  string(REPLACE "\n" ";" content "${content}")
  set(${out} "${content}" PARENT_SCOPE)
endfunction()

macro(add_violation path line what)
  file(RELATIVE_PATH _rel "${ROOT}" "${path}")
  string(APPEND violations "  ${_rel}:${line}: ${what}\n")
  math(EXPR violation_count "${violation_count} + 1")
endmacro()

set(word_start "(^|[^A-Za-z0-9_])")
set(cpp_rules
  "long[ \t]+double|long double (x87 80-bit arithmetic)"
  "__float80|__float80 (x87 80-bit arithmetic)"
  "_Float64x|_Float64x (x87 80-bit arithmetic on x86-64)"
  "${word_start}[0-9]+\\.[0-9]*([eE][-+]?[0-9]+)?[lL]([^A-Za-z0-9_]|$)|long double literal (x87)"
  "${word_start}\\.[0-9]+([eE][-+]?[0-9]+)?[lL]([^A-Za-z0-9_]|$)|long double literal (x87)"
  "${word_start}[0-9]+[eE][-+]?[0-9]+[lL]([^A-Za-z0-9_]|$)|long double literal (x87)"
  "${word_start}(exp|exp2|expm1|log|log10|log1p|log2|pow|sqrt|cbrt|hypot|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|erf|erfc|lgamma|tgamma|fabs|fma|fmod|remainder|ldexp|frexp|modf|floor|ceil|round|trunc|rint|nearbyint|strtod)l[ \t]*\\(|long double libm function (x87)"
  "${word_start}(strtold|stold)[ \t]*\\(|long double conversion (x87)"
  "${word_start}(fesetround|fesetenv|feupdateenv|_mm_setcsr)[ \t]*\\(|floating-point environment change"
  "FENV_ACCESS|floating-point environment access"
  "_MM_SET_(ROUNDING_MODE|FLUSH_ZERO_MODE|DENORMALS_ZERO_MODE)|MXCSR mode change"
  "${word_start}(__asm__|__asm|asm)[ \t]*(volatile|__volatile__)?[ \t]*\\([ \t]*\"[^\"]|non-empty inline assembly"
  "(pragma[ \t]+GCC[ \t]+optimize|optimize[ \t]*\\().*(fast-math|Ofast|unsafe-math|associative-math|reciprocal-math)|fast-math optimisation attribute")
set(libm_functions "exp|exp2|expm1|log|log2|log10|log1p|pow|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|erf|erfc|lgamma|tgamma|cbrt|hypot")
set(libm_what "glibc double libm function (its variant depends on the CPU, use dyncheck::portable)")
set(libm_rules
  "std::(${libm_functions})[ \t]*\\(|${libm_what}"
  "using[ \t]+std::(${libm_functions})([^A-Za-z0-9_]|$)|${libm_what}"
  "(^|[^A-Za-z0-9_:])::(${libm_functions})[ \t]*\\(|${libm_what}"
  "\\.(exp|expm1|log|log1p|log10|log2|sin|cos|tan|tanh|sinh|cosh|asin|acos|atan|erf|erfc|lgamma|digamma|logistic)[ \t]*\\([ \t]*\\)|Eigen array function (std:: libm on the elements outside whole packets, use unaryExpr(portable::exp_op{}))"
  "\\.pow[ \t]*\\(|Eigen array pow (std::pow per element)"
  "boost::math::[a-z_0-9]+[ \t]*\\(|Boost.Math special function (calls glibc's exp/log on double)")
set(cmake_rules
  "-ffast-math|-ffast-math"
  "-Ofast|-Ofast"
  "-funsafe-math-optimizations|-funsafe-math-optimizations"
  "-fassociative-math|-fassociative-math"
  "-freciprocal-math|-freciprocal-math"
  "-march=|-march= (instruction set beyond the baseline, FMA contraction)"
  "-mavx|-mavx* (Eigen's wider packets change summation orders)"
  "-mfma|-mfma (FMA contraction)"
  "-mfpmath=|-mfpmath= (x87 or mixed floating-point unit)"
  "-mlong-double-|-mlong-double-*")

# Checks one file against rules "regex|description"; comment_regex removes comments first.
function(check_file path rules comment_regex)
  # Cheap pre-filter on the whole file (CMake regexes allow only 9 groups, so one rule at a time):
  # most files match nothing, even with comments in, and need no line-by-line pass.
  file(READ "${path}" whole)
  set(candidate FALSE)
  foreach(rule IN LISTS rules)
    string(FIND "${rule}" "|" bar REVERSE)
    string(SUBSTRING "${rule}" 0 ${bar} regex)
    if(whole MATCHES "${regex}")
      set(candidate TRUE)
      break()
    endif()
  endforeach()
  if(NOT candidate)
    return()
  endif()
  read_lines("${path}" lines)
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "portability-guard: ")
      continue()  # a line that names the forbidden type to refuse it (scalar.hpp), with its reason
    endif()
    string(REGEX REPLACE "${comment_regex}" "" code "${line}")
    string(REPLACE "<semicolon>" ";" code "${code}")
    string(REPLACE "<lbracket>" "[" code "${code}")
    string(REPLACE "<rbracket>" "]" code "${code}")
    string(REPLACE "<backslash>" "\\" code "${code}")
    foreach(rule IN LISTS rules)
      string(FIND "${rule}" "|" bar REVERSE)
      string(SUBSTRING "${rule}" 0 ${bar} regex)
      math(EXPR after "${bar} + 1")
      string(SUBSTRING "${rule}" ${after} -1 what)
      if(code MATCHES "${regex}")
        add_violation("${path}" ${number} "${what}")
      endif()
    endforeach()
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)
  set(violation_count ${violation_count} PARENT_SCOPE)
endfunction()

set(cmake_files "")
foreach(extra CMakeLists.txt CMakePresets.json)
  if(EXISTS "${ROOT}/${extra}")
    list(APPEND cmake_files "${ROOT}/${extra}")
  endif()
endforeach()
file(GLOB top_cmake "${ROOT}/cmake/*.cmake")
list(APPEND cmake_files ${top_cmake})

set(checked 0)
foreach(tree IN LISTS TREES)
  if(NOT IS_DIRECTORY "${ROOT}/${tree}")
    message(FATAL_ERROR "check_portability.cmake: ${ROOT}/${tree} is not a directory")
  endif()
  file(GLOB_RECURSE sources "${ROOT}/${tree}/*.hpp" "${ROOT}/${tree}/*.h" "${ROOT}/${tree}/*.cpp" "${ROOT}/${tree}/*.cc"
       "${ROOT}/${tree}/*.ipp" "${ROOT}/${tree}/*.inl")
  list(SORT sources)
  set(target_use "")
  set(rules_here "${cpp_rules}")
  if(tree IN_LIST LIBM_TREES)
    list(APPEND rules_here ${libm_rules})
  endif()
  foreach(source IN LISTS sources)
    check_file("${source}" "${rules_here}" "//.*$")
    math(EXPR checked "${checked} + 1")
    if(NOT target_use)
      file(STRINGS "${source}" hits REGEX "__attribute__[ \t]*\\(\\(.*target[ \t]*\\(|pragma[ \t]+GCC[ \t]+target")
      if(hits)
        file(RELATIVE_PATH target_use "${ROOT}" "${source}")
      endif()
    endif()
  endforeach()
  file(GLOB_RECURSE tree_cmake "${ROOT}/${tree}/CMakeLists.txt" "${ROOT}/${tree}/*.cmake")
  list(APPEND cmake_files ${tree_cmake})
  if(target_use)
    set(contract_off FALSE)
    if(EXISTS "${ROOT}/${tree}/CMakeLists.txt")
      read_lines("${ROOT}/${tree}/CMakeLists.txt" lines)
      foreach(line IN LISTS lines)
        string(REGEX REPLACE "#.*$" "" code "${line}")
        if(code MATCHES "-ffp-contract=off")
          set(contract_off TRUE)
        endif()
      endforeach()
    endif()
    if(NOT contract_off)
      string(APPEND violations "  ${tree}/CMakeLists.txt: ${target_use} uses a target attribute or pragma (AVX-512/FMA "
                               "code), but ${tree} is not compiled with -ffp-contract=off\n")
      math(EXPR violation_count "${violation_count} + 1")
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES cmake_files)
list(SORT cmake_files)
foreach(cmake_file IN LISTS cmake_files)
  check_file("${cmake_file}" "${cmake_rules}" "#.*$")
  math(EXPR checked "${checked} + 1")
endforeach()

if(violation_count GREATER 0)
  message(FATAL_ERROR "portability: ${violation_count} CPU-dependent arithmetic path(s) in library code "
                      "(see tests/portability/check_portability.cmake for why each is refused):\n${violations}")
endif()
message(STATUS "portability: ${checked} files checked, no long double, x87, rounding-mode change or "
               "CPU-specific compile flag in ${TREES}, no glibc double libm call in ${LIBM_TREES}")
