// Lexer for .pk files: the tokens of a Python subset.
//
// Indentation is not handled here. NEWLINE tokens carry the whitespace that
// starts the next line, and pk::IndentingTokenSource (src/frontend/parse)
// turns them into INDENT / DEDENT tokens and drops newlines inside brackets,
// exactly as CPython's tokenizer does.
lexer grammar PkLexer;

// MATCH and CASE are Python's soft keywords: the lexer makes them NAMEs and
// pk::IndentingTokenSource retypes them where they start a `match`
// statement or one of its `case` blocks.
tokens { INDENT, DEDENT, MATCH, CASE }

// Keywords of the supported subset.
AND: 'and';
AS: 'as';
ASSERT: 'assert';
BREAK: 'break';
CLASS: 'class';
CONTINUE: 'continue';
DEF: 'def';
ELIF: 'elif';
ELSE: 'else';
EXCEPT: 'except';
FALSE: 'False';
FINALLY: 'finally';
FOR: 'for';
FROM: 'from';
IF: 'if';
IMPORT: 'import';
IN: 'in';
IS: 'is';
LAMBDA: 'lambda';
NONE: 'None';
NONLOCAL: 'nonlocal';
GLOBAL: 'global';
NOT: 'not';
OR: 'or';
PASS: 'pass';
DEL: 'del';
RAISE: 'raise';
RETURN: 'return';
TRUE: 'True';
TRY: 'try';
WHILE: 'while';
WITH: 'with';
YIELD: 'yield';

// Python keywords outside the subset. They are tokens of their own so that
// the parser can say "'class' is not supported" instead of a confusing
// syntax error.
UNSUPPORTED_KEYWORD
  : 'async' | 'await'
  ;

NAME: [a-zA-Z_] [a-zA-Z_0-9]*;

NUMBER: FLOAT_NUMBER | INTEGER;

fragment INTEGER
  : [1-9] ('_'? DIGIT)*
  | '0' ('_'? '0')*
  | '0' [xX] ('_'? [0-9a-fA-F])+
  | '0' [oO] ('_'? [0-7])+
  | '0' [bB] ('_'? [01])+
  ;
fragment DIGITS: DIGIT ('_'? DIGIT)*;
fragment DIGIT: [0-9];
fragment FLOAT_NUMBER
  : DIGITS? '.' DIGITS EXPONENT?
  | DIGITS '.' EXPONENT?
  | DIGITS EXPONENT
  ;
fragment EXPONENT: [eE] [+-]? DIGITS;

// Imaginary literals lex as one token so the parser can reject them cleanly.
IMAGINARY_NUMBER: (FLOAT_NUMBER | DIGITS) [jJ];

STRING: STRING_PREFIX? (LONG_STRING | SHORT_STRING);
fragment STRING_PREFIX: [rRbBuUfF] | [rR][bBfF] | [bBfF][rR];
fragment SHORT_STRING
  : '\'' ('\\' . | ~[\\\r\n'])* '\''
  | '"' ('\\' . | ~[\\\r\n"])* '"'
  ;
fragment LONG_STRING
  : '\'\'\'' .*? '\'\'\''
  | '"""' .*? '"""'
  ;

// A string literal that runs into the end of its line; reported by the
// token source. Longest-match makes a terminated STRING win over this.
UNTERMINATED_STRING
  : STRING_PREFIX? '\'' ('\\' . | ~[\\\r\n'])*
  | STRING_PREFIX? '"' ('\\' . | ~[\\\r\n"])*
  ;

ELLIPSIS: '...';
DOT: '.';
STAR: '*';
POWER: '**';
LPAREN: '(';
RPAREN: ')';
LBRACK: '[';
RBRACK: ']';
LBRACE: '{';
RBRACE: '}';
COMMA: ',';
COLON: ':';
SEMI: ';';
ARROW: '->';
PLUS: '+';
MINUS: '-';
SLASH: '/';
DSLASH: '//';
PERCENT: '%';
AT: '@';
PIPE: '|';
CARET: '^';
AMP: '&';
TILDE: '~';
LSHIFT: '<<';
RSHIFT: '>>';
LT: '<';
GT: '>';
LE: '<=';
GE: '>=';
EQ: '==';
NE: '!=';
ASSIGN: '=';
PLUS_ASSIGN: '+=';
MINUS_ASSIGN: '-=';
STAR_ASSIGN: '*=';
SLASH_ASSIGN: '/=';
DSLASH_ASSIGN: '//=';
PERCENT_ASSIGN: '%=';
POWER_ASSIGN: '**=';
AT_ASSIGN: '@=';
AMP_ASSIGN: '&=';
PIPE_ASSIGN: '|=';
CARET_ASSIGN: '^=';
LSHIFT_ASSIGN: '<<=';
RSHIFT_ASSIGN: '>>=';
WALRUS: ':=';

// A newline with the indentation of the following line.
NEWLINE: ('\r'? '\n' | '\r' | '\f') [ \t\f]*;

SKIP_WS: [ \t\f]+ -> skip;
SKIP_COMMENT: '#' ~[\r\n\f]* -> skip;
SKIP_LINE_JOIN: '\\' [ \t]* ('\r'? '\n' | '\r' | '\f') -> skip;

// Anything else is reported by the token source as an invalid character.
ERROR_CHAR: .;
