/**
 * No module changes what a lower layer does by being imported (docs/engines.md
 * §7.6: one place decides where a scan runs). A module's top-level code, the
 * code that runs when it is imported, may not call into another folder of
 * src/ for its effect (a call whose value it drops) nor assign to anything
 * imported from one: that is how a module would register itself with a layer
 * below it, a hook set at import that changes that layer's behaviour for every
 * caller depending on whether the registering module happened to be loaded.
 * Making a value of its own at import (`const state = new Xxh3Stream()`) is no
 * registration; function bodies are free to call anything. Read with the
 * TypeScript parser, so comments and strings never match.
 */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "..", "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** A module's folder under src/ (or its own name at the top level): the unit of a layer. */
function folderOf(srcRelative: string): string {
  return srcRelative.split("/")[0]!;
}

/**
 * The names `file` imports from modules of another folder of src/ (value
 * imports: a type import runs nothing), each with the module it came from.
 */
function foreignImports(source: ts.SourceFile, file: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || statement.importClause?.isTypeOnly) continue;
    const specifier = (statement.moduleSpecifier as ts.StringLiteral).text;
    if (!specifier.startsWith(".")) continue;
    const target = relative(SRC, resolve(dirname(join(SRC, file)), specifier.replace(/\.js$/, ".ts")));
    if (folderOf(target) === folderOf(file)) continue;
    const clause = statement.importClause;
    if (clause?.name) names.set(clause.name.text, target);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) names.set(bindings.name.text, target);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) if (!element.isTypeOnly) names.set(element.name.text, target);
    }
  }
  return names;
}

/** The identifier an expression starts from (`a` of `a.b.c(...)`, `a[0]`), if any. */
function rootName(expression: ts.Expression): string | undefined {
  let node: ts.Expression = expression;
  for (;;) {
    if (ts.isIdentifier(node)) return node.text;
    if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) node = node.expression;
    else if (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node) || ts.isAsExpression(node)) node = node.expression;
    else return undefined;
  }
}

const ASSIGNMENTS = new Set([ts.SyntaxKind.EqualsToken, ts.SyntaxKind.PlusEqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken]);

/** What `text` (module `file`, src/-relative) does at import to another folder's modules: one line per call or assignment. */
function importTimeReaches(text: string, file: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const foreign = foreignImports(source, file);
  const found: string[] = [];
  const at = (node: ts.Node): string => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    // Code in a function or a method runs when called, not at import.
    if (ts.isFunctionLike(node) && !ts.isClassStaticBlockDeclaration(node)) return;
    if (ts.isExpressionStatement(node)) {
      // A call for its effect: its value is dropped (`register(x);`, `void register(x);`, `await register(x);`).
      let call: ts.Expression = node.expression;
      while (ts.isVoidExpression(call) || ts.isAwaitExpression(call) || ts.isParenthesizedExpression(call)) call = call.expression;
      if (ts.isCallExpression(call) || ts.isNewExpression(call)) {
        const name = rootName(call.expression);
        if (name !== undefined && foreign.has(name))
          found.push(`${at(call)} calls ${call.expression.getText()} (${foreign.get(name)}) at import`);
      }
    }
    if (ts.isBinaryExpression(node) && ASSIGNMENTS.has(node.operatorToken.kind)) {
      const name = rootName(node.left);
      if (name !== undefined && foreign.has(name))
        found.push(`${at(node)} assigns ${node.left.getText()} (${foreign.get(name)}) at import`);
    }
    ts.forEachChild(node, visit);
  };
  for (const statement of source.statements) if (!ts.isImportDeclaration(statement)) visit(statement);
  return found;
}

describe("no module registers behaviour in another layer at import (docs/engines.md §7.6)", () => {
  it("finds a registration, whether a call or an assignment, and leaves calls inside functions alone", () => {
    const registering = [
      'import { usePartitionThread } from "../recovery/scan.js";',
      'import * as recovery from "../recovery/scan.js";',
      'import { helper } from "./sibling.js";',
      "usePartitionThread((directory) => null);",
      "recovery.hooks.thread = () => null;",
      'import { makeState } from "../hash/xxh3.js";',
      "const local = helper();",
      "const state = makeState();",
      "export function later(): void { usePartitionThread(null); }",
    ].join("\n");
    expect(importTimeReaches(registering, "node/scan-thread.ts")).toEqual([
      "node/scan-thread.ts:4 calls usePartitionThread (recovery/scan.ts) at import",
      "node/scan-thread.ts:5 assigns recovery.hooks.thread (recovery/scan.ts) at import",
    ]);
  });

  it("holds for every module of src/", () => {
    const found = sourceFiles(SRC).flatMap((path) => importTimeReaches(readFileSync(path, "utf8"), relative(SRC, path)));
    expect(found).toEqual([]);
  });
});
