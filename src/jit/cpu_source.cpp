// Preparing a CUDA C++ program for the host compiler (cpu_source.hpp). The source is read as
// tokens with comments, literals and preprocessor lines blanked out; line breaks are kept, so that
// the compiler's messages give the user's line numbers.
#include "jit/cpu_source.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace xp::detail {

namespace {

// The source with comments, the insides of string and character literals and preprocessor lines
// replaced by blanks (quotes kept, so that extern "C" stays visible), newlines kept.
std::string blank_out(std::string_view s) {
  std::string out(s);
  const std::size_t n = s.size();
  std::size_t i = 0;
  bool line_start = true;
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && (c == ' ' || c == '\t' || c == '\r')) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {  // a directive, with its continued lines
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
          out[i] = ' ';
          i += 2;
          continue;
        }
        out[i] = ' ';
        ++i;
      }
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') out[i++] = ' ';
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      out[i] = out[i + 1] = ' ';
      i += 2;
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
        if (s[i] != '\n') out[i] = ' ';
        ++i;
      }
      if (i < n) {
        out[i] = out[i + 1] = ' ';
        i += 2;
      }
      continue;
    }
    if (c == 'R' && i + 1 < n && s[i + 1] == '"' &&
        (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      const std::size_t open = s.find('(', i + 2);
      if (open != std::string_view::npos) {
        std::string close(1, ')');  // appended: g++ 12 warns falsely (-Wrestrict) on ")" + std::string
        close.append(s.substr(i + 2, open - i - 2)).append(1, '"');
        const std::size_t end = s.find(close, open);
        const std::size_t stop = end == std::string_view::npos ? n : end + close.size();
        for (std::size_t k = i + 1; k < stop; ++k)
          if (s[k] != '\n') out[k] = ' ';
        out[i + 1] = '"';
        out[stop - 1] = '"';
        i = stop;
        continue;
      }
    }
    if (c == '"' || c == '\'') {
      ++i;
      while (i < n && s[i] != c && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n) {
          out[i] = ' ';
          ++i;
        }
        out[i] = ' ';
        ++i;
      }
      ++i;
      continue;
    }
    ++i;
  }
  return out;
}

struct Token {
  std::string_view text;
  std::size_t pos;
};

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> t;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    if (ident_char(c)) {
      while (j < s.size() && (ident_char(s[j]) || (std::isdigit(static_cast<unsigned char>(c)) && s[j] == '.'))) ++j;
    } else if (c == ':' && j < s.size() && s[j] == ':') {
      ++j;
    }
    t.push_back({s.substr(i, j - i), i});
    i = j;
  }
  return t;
}

struct Kernel {
  std::string qualified;  // ::ns::name
  std::string name;       // ns::name, as kernel() finds it (the bare name at global scope)
};

struct Scan {
  std::vector<Kernel> kernels;
  std::vector<std::pair<std::size_t, std::size_t>> dynamic_shared;  // token index of extern, of ;
};

// The matching close of the bracket at t[i] (an index past the end when unbalanced).
std::size_t skip_balanced(const std::vector<Token>& t, std::size_t i) {
  const std::string_view open = t[i].text;
  const std::string_view close = open == "(" ? ")" : open == "[" ? "]" : open == "{" ? "}" : ">";
  int depth = 0;
  for (; i < t.size(); ++i) {
    if (t[i].text == open) ++depth;
    if (t[i].text == close && --depth == 0) return i;
  }
  return i;
}

Scan scan(const std::vector<Token>& t) {
  Scan out;
  struct Brace {
    char kind;  // n: namespace, l: extern "C" { }, o: anything else
    std::string name;
  };
  std::vector<Brace> stack;
  bool pending_namespace = false, pending_linkage = false, saw_template = false;
  std::string namespace_name;
  auto at_namespace_scope = [&] {
    return std::all_of(stack.begin(), stack.end(), [](const Brace& b) { return b.kind != 'o'; });
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string_view w = t[i].text;
    if (w == "namespace") {
      pending_namespace = true;
      namespace_name.clear();
      continue;
    }
    if (pending_namespace && w != "{") {
      if (w == "=" || w == ";")
        pending_namespace = false;  // an alias
      else if (w != "inline")
        namespace_name += std::string(w);
      continue;
    }
    if (w == "extern" && i + 2 < t.size() && t[i + 1].text == "\"") {
      std::size_t k = i + 2;
      while (k < t.size() && t[k].text != "\"") ++k;
      if (k + 1 < t.size() && t[k + 1].text == "{") pending_linkage = true;
      i = k;
      continue;
    }
    if (w == "extern" && i + 1 < t.size() && t[i + 1].text == "__shared__") {
      std::size_t k = i + 2;
      while (k < t.size() && t[k].text != ";") ++k;
      if (k < t.size()) out.dynamic_shared.emplace_back(i, k);
      i = k;
      continue;
    }
    if (w == "{") {
      if (pending_namespace) {
        stack.push_back({'n', namespace_name});
      } else if (pending_linkage) {
        stack.push_back({'l', {}});
      } else {
        stack.push_back({'o', {}});
      }
      pending_namespace = pending_linkage = false;
      saw_template = false;
      continue;
    }
    if (w == "}") {
      if (!stack.empty()) stack.pop_back();
      if (at_namespace_scope()) saw_template = false;
      continue;
    }
    if (!at_namespace_scope()) continue;
    if (w == ";") {
      saw_template = false;
      continue;
    }
    if (w == "template") {
      saw_template = true;
      continue;
    }
    if (w != "__global__") continue;
    // The function's name: the identifier before the first ( that is not an attribute's.
    std::size_t k = i + 1;
    std::string_view name;
    for (; k < t.size(); ++k) {
      const std::string_view x = t[k].text;
      if (x == ";" || x == "{") break;
      if (x == "(") {
        const std::string_view before = t[k - 1].text;
        if (before == "__launch_bounds__" || before == "__attribute__" || before == "alignas" ||
            before == "__align__" || before == "decltype" || before == "__declspec" || !ident_char(before[0])) {
          k = skip_balanced(t, k);
          continue;
        }
        name = before;
        break;
      }
    }
    if (name.empty() || saw_template) continue;
    std::string qualified, shown;
    for (const Brace& b : stack)
      if (b.kind == 'n' && !b.name.empty()) {
        qualified += "::" + b.name;
        shown += b.name + "::";
      }
    qualified += "::" + std::string(name);
    shown += std::string(name);
    if (std::none_of(out.kernels.begin(), out.kernels.end(), [&](const Kernel& e) { return e.qualified == qualified; }))
      out.kernels.push_back({qualified, shown});
  }
  return out;
}

// `extern __shared__ [attributes] T name[];` -> `static const ::xp_cpu::DynamicShared<T> name{};`
std::string dynamic_shared_declaration(std::string_view source, const std::vector<Token>& t, std::size_t from,
                                       std::size_t semicolon) {
  std::size_t name_at = semicolon;
  for (std::size_t k = from; k < semicolon; ++k)
    if (t[k].text == "[" && k > from && ident_char(t[k - 1].text[0])) {
      name_at = k - 1;
      break;
    }
  if (name_at == semicolon) return {};
  std::string type;
  for (std::size_t k = from + 2; k < name_at; ++k) {
    const std::string_view x = t[k].text;
    if ((x == "__align__" || x == "alignas" || x == "__attribute__") && k + 1 < name_at && t[k + 1].text == "(") {
      k = skip_balanced(t, k + 1);
      continue;
    }
    type += std::string(source.substr(t[k].pos, x.size()));
    type += ' ';
  }
  return "static const ::xp_cpu::DynamicShared<" + type + "> " + std::string(t[name_at].text) + "{};";
}

}  // namespace

std::vector<std::string> scan_kernel_names(std::string_view source) {
  const std::string blank = blank_out(source);
  std::vector<std::string> names;
  for (const Kernel& k : scan(tokenize(blank)).kernels) names.push_back(k.name);
  return names;
}

CpuSource prepare_cpu_source(std::string_view source, const std::string& name,
                             const std::vector<std::string>& name_expressions) {
  CpuSource out;
  const std::string blank = blank_out(source);
  const std::vector<Token> tokens = tokenize(blank);
  const Scan found = scan(tokens);

  // The rewrites, from the last so that earlier positions stay valid.
  struct Edit {
    std::size_t pos, len;
    std::string text;
  };
  std::vector<Edit> edits;
  for (const auto& [from, semi] : found.dynamic_shared) {
    std::string decl = dynamic_shared_declaration(source, tokens, from, semi);
    if (decl.empty()) continue;  // not the array form: left for the compiler to reject
    const std::size_t pos = tokens[from].pos, end = tokens[semi].pos + 1;
    const auto lines = std::count(source.begin() + static_cast<std::ptrdiff_t>(pos),
                                  source.begin() + static_cast<std::ptrdiff_t>(end), '\n');
    edits.push_back({pos, end - pos, decl + std::string(static_cast<std::size_t>(lines), '\n')});
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].text == "__noinline__") edits.push_back({tokens[i].pos, 12, "__attribute__((noinline))"});
    // `static __shared__`: __shared__ already says static
    if (tokens[i].text == "static" && i + 1 < tokens.size() && tokens[i + 1].text == "__shared__")
      edits.push_back({tokens[i].pos, 6, "      "});
  }
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
  std::string text(source);
  for (const Edit& e : edits) text.replace(e.pos, e.len, e.text);

  std::string escaped_name;
  for (const char c : name) {
    if (c == '"' || c == '\\') escaped_name += '\\';
    escaped_name += c;
  }
  out.text = "#line 1 \"" + escaped_name + "\"\n" + text + "\n#line 1 \"<xp: kernel entry points>\"\n";
  std::vector<std::pair<std::string, std::string>> entries;  // (name, expression of the function)
  for (const Kernel& k : found.kernels) entries.emplace_back(k.name, k.qualified);
  for (const std::string& e : name_expressions) {
    std::string expr = e;
    while (!expr.empty() && (expr[0] == '&' || expr[0] == ' ')) expr.erase(0, 1);
    entries.emplace_back(e, expr);
  }
  std::string table;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string fn = "xp_cpu_entry_" + std::to_string(i);
    const std::string& expr = entries[i].second;
    out.text += "extern \"C\" void " + fn + "(void** a, const xp_cpu_block* b, int t) { ::xp_cpu::run(&" + expr +
                ", a, b, t); }\n";
    std::string shown;
    for (const char c : entries[i].first) {
      if (c == '"' || c == '\\') shown += '\\';
      shown += c;
    }
    table += "    {\"" + shown + "\", " + fn + ", reinterpret_cast<const void*>(&" + expr +
             "), ::xp_cpu::param_count(&" + expr + "), ::xp_cpu::param_sizes(&" + expr + ")},\n";
    out.kernels.push_back(entries[i].first);
  }
  out.text +=
      "extern \"C\" const xp_cpu_kernel_info* xp_cpu_kernels(unsigned* count, unsigned* abi) {\n"
      "  static const xp_cpu_kernel_info table[] = {\n" +
      table +
      "    {nullptr, nullptr, nullptr, 0, nullptr}};\n"
      "  *count = " +
      std::to_string(entries.size()) +
      ";\n"
      "  *abi = XP_CPU_ABI_VERSION;\n"
      "  return table;\n"
      "}\n";
  return out;
}

}  // namespace xp::detail
