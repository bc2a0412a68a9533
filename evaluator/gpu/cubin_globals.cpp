#include "evaluator/gpu/cubin_globals.hpp"

#include <cstring>

namespace ptxbench::gpu {
namespace {

// ELF64 little-endian layouts (only the fields read here).
constexpr uint32_t k_sht_symtab = 2;
constexpr uint32_t k_sht_nobits = 8;
constexpr uint8_t k_stt_object = 1;

class elf_view {
 public:
  explicit elf_view(const std::vector<char>& b) : m_b(b) {}
  bool has(uint64_t off, uint64_t n) const { return off <= m_b.size() && n <= m_b.size() - off; }
  template <typename T>
  T get(uint64_t off) const {
    T v{};
    if (has(off, sizeof v)) std::memcpy(&v, m_b.data() + off, sizeof v);
    return v;
  }
  std::string str(uint64_t off, uint64_t limit_end) const {
    std::string s;
    while (off < limit_end && off < m_b.size() && m_b[off] != '\0' && s.size() < 4096) s.push_back(m_b[off++]);
    return s;
  }
  const char* data(uint64_t off) const { return m_b.data() + off; }

 private:
  const std::vector<char>& m_b;
};

struct section_header {
  uint32_t name, type;
  uint64_t offset, size, link, entsize;
};

}  // namespace

cubin_globals read_cubin_globals(const std::vector<char>& cubin) {
  cubin_globals out;
  elf_view e(cubin);
  if (!e.has(0, 64) || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0 || cubin[4] != 2 || cubin[5] != 1) {
    out.error = "not an ELF64 little-endian cubin";
    return out;
  }
  uint64_t shoff = e.get<uint64_t>(0x28);
  uint16_t shentsize = e.get<uint16_t>(0x3A), shnum = e.get<uint16_t>(0x3C), shstrndx = e.get<uint16_t>(0x3E);
  if (shentsize < 64 || !e.has(shoff, uint64_t(shnum) * shentsize) || shstrndx >= shnum) {
    out.error = "cubin section table out of bounds";
    return out;
  }
  std::vector<section_header> sh(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t b = shoff + uint64_t(i) * shentsize;
    sh[i] = {e.get<uint32_t>(b), e.get<uint32_t>(b + 4), e.get<uint64_t>(b + 0x18), e.get<uint64_t>(b + 0x20),
             e.get<uint32_t>(b + 0x28), e.get<uint64_t>(b + 0x38)};
  }
  const section_header& names = sh[shstrndx];
  if (!e.has(names.offset, names.size)) {
    out.error = "cubin section names out of bounds";
    return out;
  }
  auto section_name = [&](uint32_t off) { return e.str(names.offset + off, names.offset + names.size); };
  std::vector<int> global_index(shnum, -1);
  for (uint16_t i = 0; i < shnum; ++i) {
    std::string n = section_name(sh[i].name);
    if (n != ".nv.global" && n != ".nv.global.init") continue;
    cubin_globals::section_info info;
    info.name = n;
    info.bytes = sh[i].size;
    if (sh[i].type != k_sht_nobits) {
      if (!e.has(sh[i].offset, sh[i].size)) {
        out.error = "cubin section " + n + " out of bounds";
        return out;
      }
      info.initial.assign(e.data(sh[i].offset), e.data(sh[i].offset) + sh[i].size);
    }
    global_index[i] = int(out.sections.size());
    out.sections.push_back(std::move(info));
  }
  for (uint16_t i = 0; i < shnum; ++i) {
    if (sh[i].type != k_sht_symtab || sh[i].entsize < 24 || sh[i].link >= shnum) continue;
    const section_header& strtab = sh[sh[i].link];
    if (!e.has(sh[i].offset, sh[i].size) || !e.has(strtab.offset, strtab.size)) {
      out.error = "cubin symbol table out of bounds";
      return out;
    }
    for (uint64_t s = 0; s + sh[i].entsize <= sh[i].size; s += sh[i].entsize) {
      uint64_t b = sh[i].offset + s;
      uint32_t name = e.get<uint32_t>(b);
      uint8_t info = e.get<uint8_t>(b + 4);
      uint16_t shndx = e.get<uint16_t>(b + 6);
      uint64_t value = e.get<uint64_t>(b + 8), size = e.get<uint64_t>(b + 16);
      if ((info & 0xF) != k_stt_object || shndx >= shnum || global_index[shndx] < 0) continue;
      out.symbols.push_back({e.str(strtab.offset + name, strtab.offset + strtab.size),
                             out.sections[size_t(global_index[shndx])].name, value, size});
    }
  }
  return out;
}

}  // namespace ptxbench::gpu
