// Hugging Face `tokenizers` (the Rust library, through its Node binding) as
// the reference for prosgrow's tokenizer.json loader.
// usage: node hf_tokenize_reference.mjs CORPUS.json OUT.json TOKENIZER.json...
//   CORPUS.json: a JSON array of hex strings (the bytes of each text; invalid
//   UTF-8 allowed: it is decoded with replacement characters, as any
//   JavaScript or Rust caller must before Hugging Face sees it).
//   OUT.json: {"<tokenizer path>": [{ids, ids_plain, text, text_special}, ...]}
//   ids: encode(text) with special tokens added; ids_plain: without;
//   text / text_special: decode(ids) skipping / keeping special tokens.
import { readFileSync, writeFileSync } from 'node:fs';
import { Tokenizer } from '@anush008/tokenizers';

const [corpusPath, outPath, ...tokenizerPaths] = process.argv.slice(2);
if (!outPath || tokenizerPaths.length === 0) {
  console.error('usage: node hf_tokenize_reference.mjs CORPUS.json OUT.json TOKENIZER.json...');
  process.exit(2);
}
const decoder = new TextDecoder('utf-8', { fatal: false });
const texts = JSON.parse(readFileSync(corpusPath, 'utf8')).map((hex) => decoder.decode(Buffer.from(hex, 'hex')));
const out = {};
for (const path of tokenizerPaths) {
  const tok = Tokenizer.fromFile(path);
  const rows = [];
  for (const text of texts) {
    const ids = (await tok.encode(text, null, { addSpecialTokens: true })).getIds();
    const idsPlain = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
    rows.push({
      ids,
      ids_plain: idsPlain,
      text: await tok.decode(ids, true),
      text_special: await tok.decode(ids, false),
    });
  }
  out[path] = rows;
}
writeFileSync(outPath, JSON.stringify(out));
