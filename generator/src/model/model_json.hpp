// JSON form of the model, for --dump-model and the golden tests.
#pragma once

#include <nlohmann/json.hpp>

#include "model/model.hpp"

namespace cubind::model {

nlohmann::ordered_json to_json(const Type& type);
nlohmann::ordered_json to_json(const Model& model);

}  // namespace cubind::model
