// Parser for .pk files: a statically elaborated subset of Python 3.
//
// The rules follow CPython's grammar closely so that Pallas code pastes in
// unchanged. The parse tree never leaves src/frontend/parse: ASTBuilder turns
// it into pk::ast nodes with source ranges, and everything later works on
// those.
//
// Every decision is made within two tokens of lookahead: alternatives that
// share a long prefix (an expression) are left-factored, and ASTBuilder
// checks what the factored rule lets through (`(a, b for x in y)`, `a, b:
// int`). Alternatives that differ only after an arbitrarily long
// expression would make ANTLR scan to its end at every nesting level, which
// is quadratic in the input (tests/unit/ParserTest.cpp checks the bound).
parser grammar PkParser;

options { tokenVocab = PkLexer; }

file: (NEWLINE | statement)* EOF;

statement: simpleStatements | compoundStatement;

simpleStatements: simpleStatement (SEMI simpleStatement)* SEMI? NEWLINE;

simpleStatement
  // `type Alias[T] = value` (PEP 695): `type` is a soft keyword, a name
  // followed by the alias's name.
  : {_input->LT(1)->getText() == "type" && _input->LA(2) == NAME}?
    NAME aliasName=NAME typeParameters? ASSIGN expression     # typeAliasStatement
  | expressionList assignmentTail?                            # expressionStatement
  | RETURN expressionList?                                    # returnStatement
  | YIELD expressionList?                                     # yieldStatement
  | PASS                                                      # passStatement
  | DEL expressionList                                        # delStatement
  | BREAK                                                     # breakStatement
  | CONTINUE                                                  # continueStatement
  | IMPORT importedModule (COMMA importedModule)*             # importStatement
  | FROM fromModule IMPORT
      (STAR | LPAREN importedNames COMMA? RPAREN | importedNames) # fromImportStatement
  | ASSERT expression (COMMA expression)?                     # assertStatement
  | RAISE (expression (FROM cause=expression)?)?              # raiseStatement
  | NONLOCAL NAME (COMMA NAME)*                               # nonlocalStatement
  | GLOBAL NAME (COMMA NAME)*                                 # globalStatement
  ;

// What follows the first expression list of an assignment.
assignmentTail
  : (ASSIGN expressionList)+                                  # assignTail
  | augmentedOperator expressionList                          # augmentedAssignTail
  | COLON annotation=expression (ASSIGN value=expressionList)? # annotatedAssignTail
  ;

augmentedOperator
  : PLUS_ASSIGN | MINUS_ASSIGN | STAR_ASSIGN | SLASH_ASSIGN | DSLASH_ASSIGN
  | PERCENT_ASSIGN | POWER_ASSIGN | AT_ASSIGN | AMP_ASSIGN | PIPE_ASSIGN
  | CARET_ASSIGN | LSHIFT_ASSIGN | RSHIFT_ASSIGN
  ;

dottedName: NAME (DOT NAME)*;
importedModule: dottedName (AS NAME)?;
fromModule: DOT* dottedName | DOT+;
importedNames: importedName (COMMA importedName)*;
importedName: NAME (AS NAME)?;

compoundStatement
  : ifStatement
  | forStatement
  | whileStatement
  | decorated
  | withStatement
  | tryStatement
  | matchStatement
  ;

ifStatement
  : IF expression COLON block
    (ELIF expression COLON block)*
    (ELSE COLON block)?
  ;

forStatement
  : FOR targets IN expressionList COLON block (ELSE COLON block)?
  ;

whileStatement
  : WHILE expression COLON block (ELSE COLON block)?
  ;

// A function or class and the decorators before it. The decorators are
// this rule's, not the definitions', so that choosing between `def` and
// `class` takes one token after them instead of looking across them (the
// parser stays linear: ParserTest bounds every decision's lookahead).
decorated: decorator* (functionDefinition | classDefinition);

functionDefinition
  : DEF NAME typeParameters? LPAREN parameters? RPAREN
    (ARROW returnType=expression)? COLON block
  ;

// PEP 695 / 696 type parameters (`def f[T: int, *Ts, **P = X](...)`,
// `class C[T]:`): they only name types for annotations, which pkc does
// not evaluate, so they are parsed and left out of the syntax tree.
typeParameters: LBRACK typeParameter (COMMA typeParameter)* COMMA? RBRACK;
typeParameter: (STAR | POWER)? NAME (COLON bound=expression)? (ASSIGN defaultType=expression)?;

decorator: AT expression NEWLINE;

// `class Name(bases, keyword=...):`. Classes are static: dataclasses,
// NamedTuples and plain classes holding configuration and helpers.
classDefinition
  : CLASS NAME typeParameters? (LPAREN arguments? RPAREN)? COLON block
  ;

// `with a as b, c:` (context managers such as jax.named_scope).
withStatement
  : WITH withItem (COMMA withItem)* COLON block
  ;
withItem: expression (AS bitOrExpression)?;

// `try:` with `except [Type [as name]]:` clauses, `else:` and `finally:`.
tryStatement
  : TRY COLON body=block exceptClause* (ELSE COLON orelse=block)? (FINALLY COLON final=block)?
  ;
exceptClause: EXCEPT (expression (AS NAME)?)? COLON block;

// `match subject:` and its `case pattern [if guard]:` blocks (PEP 634).
// Patterns are parsed as expressions up to `|` (their syntax is a subset
// of it) and ASTBuilder turns them into patterns, rejecting the rest; an
// `as` binds each top-level pattern.
matchStatement
  : MATCH subject=expressionList COLON NEWLINE INDENT caseBlock+ DEDENT
  ;
caseBlock: CASE casePattern (COMMA casePattern)* trailingComma=COMMA? (IF guard=expression)? COLON block;
casePattern: (bitOrExpression | STAR NAME) (AS NAME)?;

parameters: parameter (COMMA parameter)* COMMA?;

parameter
  : NAME (COLON annotation=expression)? (ASSIGN defaultValue=expression)? # namedParameter
  | STAR (NAME (COLON annotation=expression)?)?                          # starParameter
  | POWER NAME (COLON annotation=expression)?                            # doubleStarParameter
  | SLASH                                                                # positionalOnlyMarker
  ;

lambdaParameters: lambdaParameter (COMMA lambdaParameter)* COMMA?;

lambdaParameter
  : NAME (ASSIGN defaultValue=expression)? # namedLambdaParameter
  | STAR NAME?                             # starLambdaParameter
  | POWER NAME                             # doubleStarLambdaParameter
  | SLASH                                  # positionalOnlyLambdaMarker
  ;

block
  : simpleStatements
  | NEWLINE INDENT statement+ DEDENT
  ;

// Targets of `for` and of comprehensions stop below comparisons so that the
// `in` keyword is not swallowed.
targets: targetItem (COMMA targetItem)* COMMA?;
targetItem: STAR? bitOrExpression;

expressionList: listItem (COMMA listItem)* trailingComma=COMMA?;
listItem: expression | STAR bitOrExpression;

expression
  : LAMBDA lambdaParameters? COLON expression                        # lambdaExpression
  | NAME WALRUS expression                                           # namedExpression
  | body=orTest (IF condition=orTest ELSE orelse=expression)?        # conditionalExpression
  ;

expressionNoConditional
  : LAMBDA lambdaParameters? COLON expressionNoConditional           # lambdaNoConditional
  | orTest                                                           # plainNoConditional
  ;

orTest: andTest (OR andTest)*;
andTest: notTest (AND notTest)*;
notTest: NOT notTest | comparison;

comparison: bitOrExpression (comparisonOperator bitOrExpression)*;
comparisonOperator: LT | GT | EQ | GE | LE | NE | IN | NOT IN | IS | IS NOT;

bitOrExpression: bitXorExpression (PIPE bitXorExpression)*;
bitXorExpression: bitAndExpression (CARET bitAndExpression)*;
bitAndExpression: shiftExpression (AMP shiftExpression)*;
shiftExpression: arithExpression ((LSHIFT | RSHIFT) arithExpression)*;
arithExpression: term ((PLUS | MINUS) term)*;
term: factor ((STAR | SLASH | DSLASH | PERCENT | AT) factor)*;
factor: (PLUS | MINUS | TILDE) factor | power;
power: primary (POWER factor)?;

primary: atom trailer*;

trailer
  : LPAREN arguments? RPAREN   # callTrailer
  | LBRACK subscripts RBRACK   # subscriptTrailer
  | DOT NAME                   # attributeTrailer
  ;

atom
  : LPAREN (expressionList comprehensionFor?)? RPAREN            # parenAtom
  | LBRACK (expressionList comprehensionFor?)? RBRACK            # listAtom
  | LBRACE braceItems? RBRACE                                     # braceAtom
  | NAME                                                          # nameAtom
  | NUMBER                                                        # numberAtom
  | IMAGINARY_NUMBER                                              # imaginaryAtom
  | STRING+                                                       # stringAtom
  | ELLIPSIS                                                      # ellipsisAtom
  | NONE                                                          # noneAtom
  | TRUE                                                          # trueAtom
  | FALSE                                                         # falseAtom
  ;

// A dict or a set display, or their comprehensions. Which one is decided by
// the token after the first item (`:`, `for`, `,` or `}`), never by
// looking ahead over it: every alternative starts differently.
braceItems
  : POWER bitOrExpression dictTail                                # doubleStarFirst
  | STAR bitOrExpression setTail                                  # starFirst
  | first=expression
    ( COLON value=expression (comprehensionFor | dictTail)
    | comprehensionFor
    | setTail
    )                                                             # expressionFirst
  ;
dictTail: (COMMA dictItem)* COMMA?;
setTail: (COMMA listItem)* COMMA?;
dictItem: key=expression COLON value=expression | POWER bitOrExpression;

subscripts: subscript (COMMA subscript)* trailingComma=COMMA?;
subscript
  : expression sliceTail?       # indexSubscript
  | sliceTail                   # sliceSubscript
  | STAR bitOrExpression        # starSubscript
  ;
// `:upper` or `:upper:step`, after an optional lower bound.
sliceTail: COLON upper=expression? (COLON step=expression?)?;

arguments: argument (COMMA argument)* COMMA?;
argument
  : NAME ASSIGN expression         # keywordArgument
  | expression comprehensionFor?   # positionalArgument
  | STAR expression                # starArgument
  | POWER expression               # doubleStarArgument
  ;

comprehensionFor: FOR targets IN orTest comprehensionIf* comprehensionFor?;
comprehensionIf: IF expressionNoConditional;
