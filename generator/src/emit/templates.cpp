#include "emit/templates.hpp"

#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace cubind::emit {

namespace {

constexpr const char* kReference = "_ref";  // keys starting with '_' belong to this file

// The mustache context, checked: each lookup is recorded, a variable found
// nowhere is kept as missing, and in reference mode a fragment's text is
// replaced by its template's name.
class CheckedContext : public kainjow::mustache::basic_context<std::string> {
 public:
  using PartialText = std::function<const std::string&(const std::string&)>;
  CheckedContext(const std::set<std::string>& sections, std::set<std::string>& used, bool references,
                 PartialText partial_text)
      : sections_(sections), used_(used), references_(references), partial_text_(std::move(partial_text)) {}

  void push(const Data* data) override { items_.insert(items_.begin(), data); }
  void pop() override { items_.erase(items_.begin()); }

  const Data* get(const std::string& name) const override {
    if (name == ".") return items_.front();
    for (const Data* item : items_) {
      const Data* var = item->get(name);
      if (!var) continue;
      used_.insert(name);
      if (references_ && name == "text") {
        if (const Data* ref = item->get(kReference)) return &temporaries_.emplace_back(ref->string_value());
      }
      return var;
    }
    if (!sections_.count(name)) missing_.insert(name);
    return nullptr;
  }
  // `{{> name}}`: the text of partials/<name>.mustache, rendered in this context.
  const Data* get_partial(const std::string& name) const override {
    return &temporaries_.emplace_back(partial_text_(name));
  }

  const std::set<std::string>& missing() const { return missing_; }

 private:
  std::vector<const Data*> items_;
  const std::set<std::string>& sections_;
  std::set<std::string>& used_;
  bool references_;
  PartialText partial_text_;
  mutable std::set<std::string> missing_;
  mutable std::deque<Data> temporaries_;
};

std::string drop_blank_lines(const std::string& text) {
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.find_first_not_of(' ') != std::string::npos) out += line + "\n";
  return out;
}

std::string shaped(std::string text, Shape shape) {
  switch (shape) {
    case Shape::Raw: return text;
    case Shape::Block: return drop_blank_lines(text);
    case Shape::Inline:
      text.erase(0, text.find_first_not_of(" \n"));
      text.erase(text.find_last_not_of(" \n") + 1);
      return text;
    case Shape::Lines:
      text = drop_blank_lines(text);
      if (!text.empty()) text.pop_back();
      return text;
  }
  return text;
}

}  // namespace

View& View::set(const std::string& key, const Data& value) {
  provided().insert(key);
  Data::set(key, value);
  return *this;
}

std::set<std::string>& View::provided() {
  static std::set<std::string> keys;
  return keys;
}

Data list_of(std::vector<View> items) {
  Data out(Data::type::list);
  for (size_t i = 0; i < items.size(); ++i) {
    // Not a view key: lists carry it whether or not a template joins them.
    items[i].Data::set("last", Data(i + 1 == items.size() ? Data::type::bool_true : Data::type::bool_false));
    out.push_back(items[i]);
  }
  return out;
}

Data strings(const std::vector<std::string>& items) {
  Data out(Data::type::list);
  for (const auto& s : items) out.push_back(Data(s));
  return out;
}

const Templates::Source& Templates::source(const std::string& name) const {
  auto it = cache_.find(name);
  if (it != cache_.end()) return it->second;
  const std::string path = dir_ + "/" + name + ".mustache";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing template " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  Source s{buffer.str(), {}};
  static const std::regex section(R"(\{\{\s*[#^]\s*([A-Za-z_][\w.]*)\s*\}\})");
  for (std::sregex_iterator m(s.text.begin(), s.text.end(), section), end; m != end; ++m) s.sections.insert((*m)[1]);
  // A partial's sections are its includer's too (it renders in that context).
  static const std::regex partial(R"(\{\{\s*>\s*([\w.]+)\s*\}\})");
  for (std::sregex_iterator m(s.text.begin(), s.text.end(), partial), end; m != end; ++m) {
    const Source& included = source(partial_name((*m)[1]));
    s.sections.insert(included.sections.begin(), included.sections.end());
  }
  return cache_.emplace(name, std::move(s)).first->second;
}

std::string Templates::render_with(const std::string& name, const Data& view, const std::vector<const Data*>& parents,
                                   bool references) {
  const Source& src = source(name);
  kainjow::mustache::mustache tmpl(src.text);
  // Templates write code, not HTML.
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  if (!tmpl.is_valid()) throw std::runtime_error("template " + name + ": " + tmpl.error_message());
  CheckedContext ctx(src.sections, used_, references,
                     [this](const std::string& p) -> const std::string& { return source(partial_name(p)).text; });
  for (const Data* p : parents) ctx.push(p);
  ctx.push(&view);
  std::string out = tmpl.render(ctx);
  if (!tmpl.is_valid()) throw std::runtime_error("template " + name + ": " + tmpl.error_message());
  if (!ctx.missing().empty()) {
    std::string keys;
    for (const auto& k : ctx.missing()) keys += " " + k;
    throw std::runtime_error("template " + name + " renders keys no view provides:" + keys);
  }
  return out;
}

std::string Templates::render_logged(const std::string& name, const Data& view, const std::vector<const Data*>& parents,
                                     Shape shape, const std::string& label) {
  const std::string out = shaped(render_with(name, view, parents, false), shape);
  if (keep_log_) {
    std::string& entry = log_[name];
    entry += "## " + label + "\n" + shaped(render_with(name, view, parents, true), shape);
    if (entry.back() != '\n') entry += "\n";
  }
  return out;
}

std::string Templates::render(const std::string& name, const Data& view, const std::vector<const Data*>& parents) {
  return render_logged(name, view, parents, Shape::Raw, name);
}

View Templates::fragment(const std::string& name, const Data& view, Shape shape, const std::string& label,
                         const std::vector<const Data*>& parents) {
  View d;
  d.set("text", render_logged(name, view, parents, shape, label));
  d.Data::set(kReference, "<<" + name + ": " + label + ">>");
  return d;
}

std::set<std::string> Templates::unused_keys() const {
  std::set<std::string> out;
  for (const auto& k : View::provided())
    if (!used_.count(k) && k[0] != '_') out.insert(k);
  return out;
}

bool write_if_changed(const std::string& path, const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream current;
      current << in.rdbuf();
      if (current.str() == text) return false;
    }
  }
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
  return true;
}

}  // namespace cubind::emit
