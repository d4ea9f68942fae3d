// Loads templates by name from the generator/templates/ folder and renders them with
// views, checking the contract between the two: a key a template renders
// that no view provides is an error, and so is a view key no template uses.
#pragma once

#include <kainjow/mustache.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cubind::emit {

using Data = kainjow::mustache::data;

// Every key set on a view is recorded, so that Templates can name the keys
// no template used. Views are built with View::set, never Data::set.
class View : public Data {
 public:
  View() : Data(Data::type::object) {}
  View(const Data& d) : Data(d) {}  // NOLINT: a view is data
  View& set(const std::string& key, const Data& value);
  View& set(const std::string& key, const std::string& value) { return set(key, Data(value)); }
  View& set(const std::string& key, const char* value) { return set(key, Data(std::string(value))); }
  View& flag(const std::string& key, bool value) {
    return set(key, Data(value ? Data::type::bool_true : Data::type::bool_false));
  }
  // Every key set on any view since the last reset.
  static std::set<std::string>& provided();
};

// A list of views or fragments; items know whether they are the last.
Data list_of(std::vector<View> items);
// A list of strings, rendered with {{.}}.
Data strings(const std::vector<std::string>& items);

// How a fragment's text is trimmed before it goes into another template.
enum class Shape {
  Raw,     // as rendered
  Block,   // lines of code: blank lines dropped
  Inline,  // an expression: surrounding whitespace dropped
  Lines,   // a declaration: blank lines and the last newline dropped
};

class Templates {
 public:
  explicit Templates(std::string dir) : dir_(std::move(dir)) { View::provided().clear(); }

  // Renders `<dir>/<name>.mustache`. Keys are looked up in `view`, then in
  // `parents` from the last to the first. Throws naming the template on a
  // syntax error or a key found nowhere (section keys may be absent: absent
  // is false).
  std::string render(const std::string& name, const Data& view, const std::vector<const Data*>& parents = {});

  // A rendered template as a value of another view: {"text": ...}. Templates
  // show it with `{{#key}}{{text}}{{/key}}`; `label` names it in the log.
  View fragment(const std::string& name, const Data& view, Shape shape, const std::string& label,
                const std::vector<const Data*>& parents = {});

  // Whether `<dir>/<name>.mustache` has a section `key` ({{#key}} or {{^key}}):
  // which slots a template fills (an element's getter, a parameter's Python
  // `forms`), so a slot only some templates fill is rendered only from those.
  bool defines(const std::string& name, const std::string& key) const { return source(name).sections.count(key) > 0; }

  // Keys some view provided that no rendered template looked up.
  std::set<std::string> unused_keys() const;

  // Keep, per template, each rendering with the fragments inside it shown as
  // `<<template>>`: a template edit then changes only its own log.
  void keep_log(bool on) { keep_log_ = on; }
  const std::map<std::string, std::string>& log() const { return log_; }

 private:
  struct Source {
    std::string text;
    std::set<std::string> sections;  // names used as {{#x}} or {{^x}}
  };
  const Source& source(const std::string& name) const;
  // A partial `{{> name}}` is partials/<name>.mustache.
  static std::string partial_name(const std::string& name) { return "partials/" + name; }
  std::string render_logged(const std::string& name, const Data& view, const std::vector<const Data*>& parents,
                            Shape shape, const std::string& label);
  std::string render_with(const std::string& name, const Data& view, const std::vector<const Data*>& parents,
                          bool references);

  std::string dir_;
  mutable std::map<std::string, Source> cache_;
  std::set<std::string> used_;
  bool keep_log_ = false;
  std::map<std::string, std::string> log_;
};

// Writes `text` to `path` unless the file already holds exactly that.
// Returns true when the file was written.
bool write_if_changed(const std::string& path, const std::string& text);

}  // namespace cubind::emit
