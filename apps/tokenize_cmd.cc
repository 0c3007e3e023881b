// prosgrow tokenize: prints the token ids of a text as a JSON array.
#include <cstdio>

#include "base/cli_util.h"
#include "model/model_source.h"
#include "subcommands.h"
#include "synth/make_model.h"
#include "tokenizer/tokenizer.h"

namespace pg {

int TokenizeMain(int argc, char** argv) {
  CLI::App app("Print the token ids of a text as a JSON array", "prosgrow tokenize");
  std::string model, prompt;
  bool no_special = false;
  app.add_option("-m,--model", model, "GGUF file or Hugging Face model directory (default: the built-in model)");
  app.add_option("-p,--prompt", prompt, "text to tokenize")->required();
  app.add_flag("--no-special", no_special, "add no BOS/EOS and do not parse special-token text");
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  if (model.empty()) {
    auto def = EnsureDefaultModel("");
    if (!def.ok()) return Fail("tokenize", def.status().message());
    model = *def;
  }
  auto source = OpenModelSource(model);
  if (!source.ok()) return Fail("tokenize", source.status().message());
  auto tok = (*source)->LoadTokenizer();
  if (!tok.ok()) return Fail("tokenize", tok.status().message());
  std::vector<int32_t> ids = (*tok)->Encode(prompt, !no_special, !no_special);
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  out += "]\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace pg
