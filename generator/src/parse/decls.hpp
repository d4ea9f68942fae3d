// Second pass over the headers: functions, enums, records, typedefs.
#pragma once

#include <clang-c/Index.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "parse/types.hpp"

namespace cubind::parse {

class DeclCollector {
 public:
  // `files` maps each header's real path to its name as included.
  DeclCollector(model::Model& model, const NameTable& names, const std::map<std::string, std::string>& files)
      : model_(model), names_(names), types_(names), files_(files) {}

  void collect(CXCursor unit);
  // The members of enums that name no type (`enum { A = 1 };`), in header order.
  const std::vector<model::Constant>& constants() const { return constants_; }

 private:
  void add_function(CXCursor c, const std::string& header);
  void add_enum(CXCursor c, const std::string& header);
  void add_record(CXCursor c, const std::string& header, const std::string& parent);
  void add_typedef(CXCursor c, const std::string& header);
  model::Field anonymous_member(CXCursor record, CXType parent_type);
  std::string name_of(CXCursor decl) const;
  void note_use(CXType type);

  model::Model& model_;
  const NameTable& names_;
  TypeConverter types_;
  const std::map<std::string, std::string>& files_;
  std::set<std::string> seen_;  // USRs and function names already added
  std::set<std::string> defined_;  // USRs of the records whose definition is complete
  std::map<std::string, int> forward_;  // USR of a record used before its definition -> its forward declaration's order
  int order_ = 0;
  std::vector<model::Constant> constants_;
};

model::Doc doc_of(CXCursor c);

}  // namespace cubind::parse
