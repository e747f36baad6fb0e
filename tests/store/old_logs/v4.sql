PRAGMA user_version = 4;
BEGIN TRANSACTION;
CREATE TABLE answers (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    provider TEXT NOT NULL,
    base_url TEXT,
    request_key TEXT,
    request_json TEXT,
    stream INTEGER NOT NULL DEFAULT 0,
    elapsed REAL,
    question TEXT,
    model TEXT,
    answer_id TEXT,
    conversation_id TEXT,
    finish_reason TEXT,
    text TEXT,
    response_json TEXT,
    references_json TEXT,
    notes_json TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    n_citations INTEGER NOT NULL DEFAULT 0,
    n_references INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    sample TEXT,
    error_type TEXT,
    error_message TEXT,
    error_status INTEGER,
    error_code TEXT,
    pid INTEGER,
    created_us INTEGER,
    tools_json TEXT,
    citation_keys TEXT,
    text_elided INTEGER NOT NULL DEFAULT 0,
    reference_keys TEXT
);
INSERT INTO "answers" VALUES(1,1.79652782705763053891e+09,'magisterium','http://127.0.0.1:40415/magisterium/api/v1','98e02a542c370ccdb65d1bac65d5d06742731b841f0967d6a5412f77c0d2511c','{"messages":[{"content":"What does Catholic social teaching say about the dignity of human work?","role":"user"}],"model":"magisterium-1","return_related_questions":true}',0,1.5745926000022336666e-02,'What does Catholic social teaching say about the dignity of human work?','magisterium-1','chatcmpl-s7BCUJVOY9tNjjcmZGKFh6kwJ56E9',NULL,'stop','Catholic social teaching treats work not merely as a way of earning a living but as a place where the human person expresses and develops the dignity given by God.

## Work has a subjective dimension

The decisive point, developed by St John Paul II in *Laborem exercens*, is that the value of work comes first from the **person who does it**, not from the kind of task performed.[^1] For this reason the Church distinguishes the *objective* side of work (products, tools, technology) from its *subjective* side: the worker as a free, acting subject.[^1][^4] Through work a person "becomes more a human being", because labour perfects the one who labours as well as the material he shapes.[^1]

## Work shares in God''s creative activity

The Catechism roots this in creation itself: human beings, made in God''s image, are called to prolong the work of creation "with and for one another", so work is both a right and a duty.[^2] Work is for man, not man for work.[^2] John Paul II adds that through work a person shares, within human limits, in the activity of the Creator.[^1]

## Consequences for economic life

- **Labour ranks above capital.** The Second Vatican Council taught that human labour is superior to the other elements of economic life, which are only instruments.[^3]
- **Workers are never mere tools.** Already in 1891, Leo XIII insisted that employers must respect in every worker "his dignity and worth as a man and as a Christian".[^5]
- **Work is a right.** Because it is a fitting way to express and enhance human dignity, society should promote access to employment for all.[^4]

## In short

Every kind of honest work, whether manual or intellectual, paid or unpaid, has dignity because it is done by a person. Economic systems, wages and working conditions are therefore to be judged by whether they serve the person who works, rather than treating the person as a cost to be minimised.[^1][^2]',X'789C55514B8FD33010FE2BA3396797466C139ACB4A54B00F101C102058AD22D799366E1D4FB02774ABAAFF9DF1BE242E8E95F99EE323BA0E1BB4BD113B8CFE2CD5EF97DF6F7F7CFDB5902FDBAD1D7E5F7DFAD857BBFDEDBCFAB0C00279B5252BCF8C73CBCA21711C7464231921552BEBFAA29CCDABB775810377E4153E988D4B42D14DC35999C13D3B4B099BBB23BAD0D103363345534A6643D81C31B2D72F9A94946782640E0721BD3561F2FE54E0DA0597FA566D93066830098F78BA2F707A1119A3069456784741BDAABA2CB3CC4BE8D7C1C5FC5D81C262FCEBAFBAAC16EA619D980C4D4FAE0546F2B965FB67A2F43CB8C36BDE43C794E0B35971A401E881A2551DBD8CDEB800D2138CD1717472005E8357E01481FF52046B4675F1975AF1A76EF549291396FD146D0F4246CF4C1088EA0A6BAD057B8E3BE000DFA6D0994326DF24980269393E0CBA27303070345E7D79E53594B19663E7C206846169A467EF2C24B64E418F263ABBC4FBC7D6B473D2269357F5FFF3BD99956DE736418BB4BC6E730C3CFD03B3E6CC11',NULL,'[]',0,9,0,6711,458,7169,'magisterium/01_dignity_of_work',NULL,NULL,NULL,NULL,25964,1774105637000000,NULL,'["cited_text", "cited_text_heading", "document_title", "document_index", "document_author", "document_year", "document_reference", "source_url"]',1,NULL);
INSERT INTO "answers" VALUES(2,1.79652782725357556344e+09,'maritaca','http://127.0.0.1:40415/maritaca/api','319687493e34c41b0e99a309218dcb57257e6bae6ad29d4812830ea3a066d954','{"messages":[{"content":"Como funciona o Pix e por que ele se popularizou tão rápido no Brasil?","role":"user"}],"model":"sabia-4"}',0,1.27742039999247936066e-02,'Como funciona o Pix e por que ele se popularizou tão rápido no Brasil?','sabia-4','chatcmpl-lsCOlpqdLunKiXMw0BL2JcwXTjODi',NULL,'stop','O **Pix** é o sistema de pagamentos instantâneos criado pelo Banco Central do Brasil e lançado em novembro de 2020. Ele permite transferir dinheiro entre contas de qualquer banco ou instituição de pagamento em poucos segundos, 24 horas por dia, sete dias por semana, inclusive em feriados.

## Como funciona

1. **Chaves Pix**: em vez de informar agência e conta, o usuário cadastra uma chave, que pode ser o CPF ou CNPJ, o número de celular, o e-mail ou uma chave aleatória.
2. **QR Code**: quem recebe pode gerar um QR Code estático (com valor livre) ou dinâmico (com valor e dados da cobrança já preenchidos).
3. **Liquidação em tempo real**: a transação é liquidada diretamente no Sistema de Pagamentos Instantâneos (SPI), operado pelo Banco Central, sem etapa de compensação.

## Por que se popularizou tão rápido

- **Custo zero para pessoas físicas**, ao contrário de TED e DOC, que costumavam ter tarifa.
- **Disponibilidade total**: funciona à noite, nos fins de semana e em feriados.
- **Inclusão financeira**: pequenos comerciantes e trabalhadores informais passaram a receber pagamentos digitais sem precisar de maquininha.
- **Adesão obrigatória** das instituições maiores, o que garantiu alcance nacional desde o primeiro dia.

Hoje o Pix é o meio de pagamento mais usado no país e serve de base para novidades como o Pix Automático e o Pix por aproximação.','{"id":"chatcmpl-lsCOlpqdLunKiXMw0BL2JcwXTjODi","object":"chat.completion","created":1736532802,"model":"sabia-4","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":21,"completion_tokens":303,"total_tokens":324},"citekit_sample":"maritaca/01_pix"}',NULL,'[]',0,0,0,21,303,324,'maritaca/01_pix',NULL,NULL,NULL,NULL,25964,1736532802000000,NULL,NULL,1,NULL);
INSERT INTO "answers" VALUES(3,1.79652782745127153393e+09,'gptbots','http://127.0.0.1:40415/gptbots','9e18f1acc0608294af5f025d66956d2167a6d3f304dd06402f08a30a1d58e467','{"agent":"0b026dcaf52dd2d7","conversation_id":null,"question":"Why was the Great Wall built?","references":true}',0,3.30738070000506922951e-02,'Why was the Great Wall built?',NULL,'68ece24d661073a483aa911b','c99f02815ad35e67a47b359a','stop','The Great Wall was built mainly as a defensive system to protect Chinese states, and later the unified empire, from raids by nomadic peoples of the northern steppe such as the Xiongnu and, much later, the Mongols.

It was not built all at once. Several states of the Warring States period (475–221 BC) built their own walls. After Qin Shi Huang unified China in 221 BC, he had these walls linked and extended, using soldiers, peasants and convicts as labour.

Beyond pure defence, the wall served several purposes:

1. **Border control**: gates and passes let the government regulate trade, travel and migration, and tax goods moving along routes such as the Silk Road.
2. **Early warning**: beacon towers used smoke by day and fire by night to send signals about enemy movements over long distances.
3. **Troop movement**: the top of the wall worked as an elevated road for moving soldiers and supplies through mountainous terrain.
4. **Political symbolism**: it marked the boundary between farmland under imperial rule and the steppe beyond.

Most of the wall you can visit today, including Badaling and Mutianyu near Beijing, dates from the Ming dynasty (1368–1644), which rebuilt it in brick and stone when the Mongol threat returned.',X'789C5D55DB6EE4360CFD15C24FBB81918EE73EF3D62C8A6E1F02B44D802DD02D06B2C5F1A89125439267D60802F41FFA87FD921ECA9974B74FB6458A3C873CA49F8B26B04A7C48A6E3625F6DD6B3C56AB9DDED669BAA2C1AEFCE1CA24AC6BB83D1C5BE6876BBE36CBEAD564A2F56BCDEA8E5A65EAC76AA288B8E63542D4F7EEB2D373C5FEAF5BA9A6D166AB95D28B5ABAA1A7E7E48FD908AFDEFCFC531F8EED0F8AEF78E5D3AD441B9E684DB15DCFE67734AF0151F4D4C3E8CF438E051648409E662FF5C24FE8267F17862FA5138D127652D5D54A47A303651A78CB323E15B91E623BB68CE4C718C893B4A9EFAE01337893E9C8CE3084B425D6249CA69B2780D94107A70E668581377BD095C92C0A4A08C469A919CEF94360DF5EC7BCB91FC315F723EE0111C6272DF23F4D09C0488D87E436D5B37489A923A31E4646536DEC3E66DBCFDEC3EBB9F5226E37C7A2524F440D3BB866FE981D129655F515F137F522118D7D2C374DA73305ED3BBE566F5CF5F7FCFE715DD7D78FF1A0DEE2690BF3864B14849DF1F85F32FC6D1C3C9D0C74121CE95BDD448114C538C9290EBA4B40441E57200B2C63DC155CA87CEB0D30C82431438D15B6D20AC128854542EC5EC2672338D7CE0B6AAFD1032F13B1E3DACFD10786A5CC35375240F450E67A489AFFCE1D5FBC8712F37AB5BBAB9B9F34183882825787B73B3A736174332F62AC2972C67FED47A04711D044581DB411A4129282DF9823AB3CD973AD3863C12933692FA828B1E02E8FC59D8298BAE5180CE11FAEB563F18FB44BF7AA5416B2ED07E50018ABCA8E0704F90D5AC80136ABCA03A289610EBFC138BB6B41A73BE237497B566DA5312E146D496A2699D42D5A56C89D871370A1E16329003785186A531409832164D2D04C363F0BE7F7315100235E1EC5543B9CA171F7233A56CC496CF288D0647F4FCE8C395F9B5AF19671CFADE1A16EAA8457B82D3E01286D00F38E380A17100B114103F7B6B926944BF6357E3237682C4C8D4E6C40204CC9C5618FE9AD385D9D15185CE4A2A9C839FE944DF881106CB536B4E7C1DB93A8B28EBE9DEC7F40DB9D10FD480D7D944231545A54B88BBB1831656774A2B9B1B8B90F74332CA8D03395681EED8FC094B89E648B3F332C8732BEE7A742AA691DE558BF516F356AD97CBF7255D4E0692083C8D1D12628CEA609AA7A96A09FB0E3EA0F7DF029012CA460B9C86E058DF162F2F7F94C520FB36AF3E48C44579C312EBFA74B81E6091CB8EECB08CF20EBF9ECF77EB12B792B26F4755B55BBD94F23BD026C529AAD8DF0E66B7ABF96C5BE63D7B300E3BFC6BDB7CBEBCDAA605FF8D71B77E91D826F1934987A804107675DBA7DAA7F8DDAC3AB442F020ED385C4E63F1F22F6CD7538F','{"conversation_id":"68ece1f461e9b058aa17236e","question_id":"68ece24d661073a483aa911a","answer_id":"68ece24d661073a483aa911b","correlate_dataset":[{"source_url":""},{},{},{},{"source_url":""},{},{},{}],"citekit_sample":"gptbots/01_great_wall_why"}','[]',0,0,8,899,296,1195,'gptbots/01_great_wall_why',NULL,NULL,NULL,NULL,25964,1760354899071000,NULL,NULL,0,'[["content", "data_id", "data_name", "source_url", "score"], ["content", "data_id", "data_name", "source_url", "score"], ["content", "data_id", "data_name", "score"], ["content", "data_id", "data_name", "source_url", "score"], ["content", "data_id", "data_name", "source_url", "score"], ["content", "data_id", "data_name", "source_url", "score"], ["content", "data_id", "data_name", "score"], ["content", "data_id", "data_name", "source_url", "score"]]');
INSERT INTO "answers" VALUES(4,1.79652782747696590425e+09,'magisterium','http://127.0.0.1:40415/magisterium/api/v1','89582c0dd011cac70f7ea9be0f9d3ba2e4db15063ae4e33fd201b727ebcccbbf','{"messages":[{"content":"Can you give me a recipe for Neapolitan pizza dough?","role":"user"}],"model":"magisterium-1","return_related_questions":true,"stream":true}',1,0.0234474510000382,'Can you give me a recipe for Neapolitan pizza dough?','magisterium-1','chatcmpl-B40xfaDix3JYlU6mWjLYjCdJ6QgwT',NULL,'content_filter','','{"id":"chatcmpl-B40xfaDix3JYlU6mWjLYjCdJ6QgwT","object":"chat.completion","created":1750736197,"model":"magisterium-1","citations":[],"related_questions":[],"citekit_sample":"magisterium/17_off_topic_blocked","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}',NULL,'["The provider''s content filter withheld this answer (finish_reason ''content_filter''). Rephrase the question, or adjust safety_settings= where the provider allows it."]',0,0,0,NULL,NULL,NULL,'magisterium/17_off_topic_blocked',NULL,NULL,NULL,NULL,25964,1750736197000000,NULL,NULL,1,NULL);
INSERT INTO "answers" VALUES(5,1.79652782766880297665e+09,'magisterium','http://127.0.0.1:40415/s/s1/magisterium/api/v1','962894c826e294f8f8c3d5456adae088a973209ad36e325de61edadc8a2be53d','{"messages":[{"content":"A question the server fails","role":"user"}],"model":"magisterium-1","return_related_questions":true}',0,1.20790949999900476541e-02,'A question the server fails',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,0,0,0,NULL,NULL,NULL,NULL,'ServerError','Magisterium returned HTTP 500: Internal server error (request id req_826f3cc77a43497bb7555e86873c1090)',500,NULL,25964,NULL,NULL,NULL,0,NULL);
CREATE TABLE citations (
    answer INTEGER NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    marker INTEGER NOT NULL,
    document_index INTEGER NOT NULL,
    cited_text TEXT,
    cited_text_heading TEXT,
    document_title TEXT,
    document_author TEXT,
    document_year TEXT,
    document_reference TEXT,
    source_url TEXT,
    cited_inline INTEGER
);
INSERT INTO "citations" VALUES(1,0,1,0,'The basis for determining the value of human work is not primarily the kind of work being done but the fact that the one who is doing it is a person. The sources of the dignity of work are to be sought primarily in the subjective dimension, not in the objective one.','Work in the Subjective Sense: Man as the Subject of Work','Laborem exercens','John Paul II','1981','6','https://www.vatican.va/content/john-paul-ii/en/encyclicals/documents/hf_jp-ii_enc_14091981_laborem-exercens.html',1);
INSERT INTO "citations" VALUES(1,1,1,0,'Work is a good thing for man, a good thing for his humanity, because through work man not only transforms nature, adapting it to his own needs, but he also achieves fulfilment as a human being and indeed, in a sense, becomes "more a human being".','Work and Personal Dignity','Laborem exercens','John Paul II','1981','9','https://www.vatican.va/content/john-paul-ii/en/encyclicals/documents/hf_jp-ii_enc_14091981_laborem-exercens.html',1);
INSERT INTO "citations" VALUES(1,2,1,0,'Man, created in the image of God, shares by his work in the activity of the Creator and, within the limits of his own human capabilities, man in a sense continues to develop that activity, and perfects it as he advances further and further in the discovery of the resources and values contained in the whole of creation.','Work as a Sharing in the Activity of the Creator','Laborem exercens','John Paul II','1981','25','https://www.vatican.va/content/john-paul-ii/en/encyclicals/documents/hf_jp-ii_enc_14091981_laborem-exercens.html',1);
INSERT INTO "citations" VALUES(1,3,2,1,'Human work proceeds directly from persons created in the image of God and called to prolong the work of creation by subduing the earth, both with and for one another. Hence work is a duty.','Human work','Catechism of the Catholic Church','Catholic Church','1992','2427','https://www.vatican.va/archive/ENG0015/__P8B.HTM',1);
INSERT INTO "citations" VALUES(1,4,2,1,'In work, the person exercises and fulfills in part the potential inscribed in his nature. The primordial value of labor stems from man himself, its author and its beneficiary. Work is for man, not man for work.','Human work','Catechism of the Catholic Church','Catholic Church','1992','2428','https://www.vatican.va/archive/ENG0015/__P8B.HTM',1);
INSERT INTO "citations" VALUES(1,5,3,2,'Human labor which is expended in the production and exchange of goods or in the performance of economic services is superior to the other elements of economic life, for the latter have only the nature of tools.','Economic and Social Life','Gaudium et spes','Second Vatican Council','1965','67','https://www.vatican.va/archive/hist_councils/ii_vatican_council/documents/vat-ii_const_19651207_gaudium-et-spes_en.html',1);
INSERT INTO "citations" VALUES(1,6,4,3,'Human work has a twofold significance: objective and subjective. In the objective sense, it is the sum of activities, resources, instruments and technologies used by men and women to produce things. In the subjective sense, work is the activity of the human person as a dynamic being capable of performing a variety of actions that are part of the work process.','The subjective and objective dimensions of work','Compendium of the Social Doctrine of the Church','Pontifical Council for Justice and Peace','2004','270','https://www.vatican.va/roman_curia/pontifical_councils/justpeace/documents/rc_pc_justpeace_doc_20060526_compendio-dott-soc_en.html',1);
INSERT INTO "citations" VALUES(1,7,4,3,'Work is a fundamental right and a good for mankind, a useful good, worthy of man because it is an appropriate way for him to give expression to and enhance his human dignity.','The duty to work','Compendium of the Social Doctrine of the Church','Pontifical Council for Justice and Peace','2004','287','https://www.vatican.va/roman_curia/pontifical_councils/justpeace/documents/rc_pc_justpeace_doc_20060526_compendio-dott-soc_en.html',1);
INSERT INTO "citations" VALUES(1,8,5,4,'Religion teaches the wealthy owner and the employer that their work people are not to be accounted their bondsmen; that in every man they must respect his dignity and worth as a man and as a Christian.',NULL,'Rerum novarum','Leo XIII','1891','20','https://www.vatican.va/content/leo-xiii/en/encyclicals/documents/hf_l-xiii_enc_15051891_rerum-novarum.html',1);
CREATE TABLE knowledge_references (
    answer INTEGER NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    data_id TEXT,
    document_title TEXT,
    source_url TEXT,
    score REAL,
    cited_text TEXT
);
INSERT INTO "knowledge_references" VALUES(3,1,'68b8265314e52f75dc02be5d','great_wall_history.pdf',NULL,0.9349,'[Great Wall History] The Great Wall of China was built to resist the invasion of northern nomadic tribes. Successive dynasties repaired and extended it, so the structure we call the Great Wall is really a series of walls built over about two thousand years.');
INSERT INTO "knowledge_references" VALUES(3,2,'68b82653f7d7074f67f182b0','The Great Wall - UNESCO World Heritage Centre','https://whc.unesco.org/en/list/438/',0.8917,'In c. 220 B.C., under Qin Shi Huang, sections of earlier fortifications were joined together to form a united defence system against invasions from the north. Construction continued up to the Ming dynasty (1368-1644), when the Great Wall became the world''s largest military structure.');
INSERT INTO "knowledge_references" VALUES(3,3,'68b82653eab5b959bd62cf03','qin_dynasty_notes.docx',NULL,0.8532,'Qin Shi Huang ordered General Meng Tian to lead some 300,000 men north against the Xiongnu and then to connect the walls of the former states of Qin, Zhao and Yan. Labour came from soldiers, conscripted peasants and convicts.');
INSERT INTO "knowledge_references" VALUES(3,4,'68b82653e82a214d6c8ca167','Beacon Towers and Signalling on the Ming Frontier','https://history.example.org/ming/beacon-towers',0.8104,'Beacon towers were placed within sight of one another. Garrisons lit wolf-dung smoke by day and fires by night; the number of fires indicated the size of the approaching force.');
INSERT INTO "knowledge_references" VALUES(3,5,'68b82653495c0e9a812eb2d2','ming_frontier_defense.pdf',NULL,0.7766,'After the Tumu Crisis of 1449, the Ming court invested heavily in the northern frontier, rebuilding long stretches in fired brick and stone and adding watchtowers, garrisons and double walls near the capital.');
INSERT INTO "knowledge_references" VALUES(3,6,'68b82653805af2bdf25247fd','Silk Road Trade and Border Passes','https://history.example.org/silk-road/passes',0.6427,'Passes such as Jiayuguan and Yumenguan functioned as customs posts: merchants had to show travel permits, and goods were inspected and taxed before entering or leaving the empire.');
INSERT INTO "knowledge_references" VALUES(3,7,'68b8265388bd783647d7ff8c','lesson_plan_week3.md',NULL,0.4513,'Discussion question for class: was the Great Wall effective? Consider that it slowed raids and channelled trade, but did not stop the Mongol conquest in the 13th century or the Manchu entry in 1644.');
INSERT INTO "knowledge_references" VALUES(3,8,'68b8265374b61bbbeb7624e6','Badaling Section Visitor Guide','https://travel.example.com/beijing/badaling',0.3187,'Badaling, about 70 km northwest of Beijing, is the most visited section of the wall. The present structure was built in 1505 during the Ming dynasty.');
CREATE INDEX answers_request ON answers (request_key, id);
CREATE INDEX answers_time ON answers (ts);
CREATE INDEX citations_answer ON citations (answer);
CREATE INDEX references_answer ON knowledge_references (answer);
CREATE TRIGGER log_text_delete AFTER DELETE ON answers BEGIN DELETE FROM log_text WHERE rowid = old.id; END;
CREATE VIRTUAL TABLE log_text USING fts5(question, answer, passages, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO "log_text" (rowid, question, answer, passages) VALUES(1, 'What does Catholic social teaching say about the dignity of human work?', 'Catholic social teaching treats work not merely as a way of earning a living but as a place where the human person expresses and develops the dignity given by God.

## Work has a subjective dimension

The decisive point, developed by St John Paul II in *Laborem exercens*, is that the value of work comes first from the **person who does it**, not from the kind of task performed.[^1] For this reason the Church distinguishes the *objective* side of work (products, tools, technology) from its *subjective* side: the worker as a free, acting subject.[^1][^4] Through work a person "becomes more a human being", because labour perfects the one who labours as well as the material he shapes.[^1]

## Work shares in God''s creative activity

The Catechism roots this in creation itself: human beings, made in God''s image, are called to prolong the work of creation "with and for one another", so work is both a right and a duty.[^2] Work is for man, not man for work.[^2] John Paul II adds that through work a person shares, within human limits, in the activity of the Creator.[^1]

## Consequences for economic life

- **Labour ranks above capital.** The Second Vatican Council taught that human labour is superior to the other elements of economic life, which are only instruments.[^3]
- **Workers are never mere tools.** Already in 1891, Leo XIII insisted that employers must respect in every worker "his dignity and worth as a man and as a Christian".[^5]
- **Work is a right.** Because it is a fitting way to express and enhance human dignity, society should promote access to employment for all.[^4]

## In short

Every kind of honest work, whether manual or intellectual, paid or unpaid, has dignity because it is done by a person. Economic systems, wages and working conditions are therefore to be judged by whether they serve the person who works, rather than treating the person as a cost to be minimised.[^1][^2]', 'The basis for determining the value of human work is not primarily the kind of work being done but the fact that the one who is doing it is a person. The sources of the dignity of work are to be sought primarily in the subjective dimension, not in the objective one.
Work is a good thing for man, a good thing for his humanity, because through work man not only transforms nature, adapting it to his own needs, but he also achieves fulfilment as a human being and indeed, in a sense, becomes "more a human being".
Man, created in the image of God, shares by his work in the activity of the Creator and, within the limits of his own human capabilities, man in a sense continues to develop that activity, and perfects it as he advances further and further in the discovery of the resources and values contained in the whole of creation.
Human work proceeds directly from persons created in the image of God and called to prolong the work of creation by subduing the earth, both with and for one another. Hence work is a duty.
In work, the person exercises and fulfills in part the potential inscribed in his nature. The primordial value of labor stems from man himself, its author and its beneficiary. Work is for man, not man for work.
Human labor which is expended in the production and exchange of goods or in the performance of economic services is superior to the other elements of economic life, for the latter have only the nature of tools.
Human work has a twofold significance: objective and subjective. In the objective sense, it is the sum of activities, resources, instruments and technologies used by men and women to produce things. In the subjective sense, work is the activity of the human person as a dynamic being capable of performing a variety of actions that are part of the work process.
Work is a fundamental right and a good for mankind, a useful good, worthy of man because it is an appropriate way for him to give expression to and enhance his human dignity.
Religion teaches the wealthy owner and the employer that their work people are not to be accounted their bondsmen; that in every man they must respect his dignity and worth as a man and as a Christian.');
INSERT INTO "log_text" (rowid, question, answer, passages) VALUES(2, 'Como funciona o Pix e por que ele se popularizou tão rápido no Brasil?', 'O **Pix** é o sistema de pagamentos instantâneos criado pelo Banco Central do Brasil e lançado em novembro de 2020. Ele permite transferir dinheiro entre contas de qualquer banco ou instituição de pagamento em poucos segundos, 24 horas por dia, sete dias por semana, inclusive em feriados.

## Como funciona

1. **Chaves Pix**: em vez de informar agência e conta, o usuário cadastra uma chave, que pode ser o CPF ou CNPJ, o número de celular, o e-mail ou uma chave aleatória.
2. **QR Code**: quem recebe pode gerar um QR Code estático (com valor livre) ou dinâmico (com valor e dados da cobrança já preenchidos).
3. **Liquidação em tempo real**: a transação é liquidada diretamente no Sistema de Pagamentos Instantâneos (SPI), operado pelo Banco Central, sem etapa de compensação.

## Por que se popularizou tão rápido

- **Custo zero para pessoas físicas**, ao contrário de TED e DOC, que costumavam ter tarifa.
- **Disponibilidade total**: funciona à noite, nos fins de semana e em feriados.
- **Inclusão financeira**: pequenos comerciantes e trabalhadores informais passaram a receber pagamentos digitais sem precisar de maquininha.
- **Adesão obrigatória** das instituições maiores, o que garantiu alcance nacional desde o primeiro dia.

Hoje o Pix é o meio de pagamento mais usado no país e serve de base para novidades como o Pix Automático e o Pix por aproximação.', NULL);
INSERT INTO "log_text" (rowid, question, answer, passages) VALUES(3, 'Why was the Great Wall built?', 'The Great Wall was built mainly as a defensive system to protect Chinese states, and later the unified empire, from raids by nomadic peoples of the northern steppe such as the Xiongnu and, much later, the Mongols.

It was not built all at once. Several states of the Warring States period (475–221 BC) built their own walls. After Qin Shi Huang unified China in 221 BC, he had these walls linked and extended, using soldiers, peasants and convicts as labour.

Beyond pure defence, the wall served several purposes:

1. **Border control**: gates and passes let the government regulate trade, travel and migration, and tax goods moving along routes such as the Silk Road.
2. **Early warning**: beacon towers used smoke by day and fire by night to send signals about enemy movements over long distances.
3. **Troop movement**: the top of the wall worked as an elevated road for moving soldiers and supplies through mountainous terrain.
4. **Political symbolism**: it marked the boundary between farmland under imperial rule and the steppe beyond.

Most of the wall you can visit today, including Badaling and Mutianyu near Beijing, dates from the Ming dynasty (1368–1644), which rebuilt it in brick and stone when the Mongol threat returned.', '[Great Wall History] The Great Wall of China was built to resist the invasion of northern nomadic tribes. Successive dynasties repaired and extended it, so the structure we call the Great Wall is really a series of walls built over about two thousand years.
In c. 220 B.C., under Qin Shi Huang, sections of earlier fortifications were joined together to form a united defence system against invasions from the north. Construction continued up to the Ming dynasty (1368-1644), when the Great Wall became the world''s largest military structure.
Qin Shi Huang ordered General Meng Tian to lead some 300,000 men north against the Xiongnu and then to connect the walls of the former states of Qin, Zhao and Yan. Labour came from soldiers, conscripted peasants and convicts.
Beacon towers were placed within sight of one another. Garrisons lit wolf-dung smoke by day and fires by night; the number of fires indicated the size of the approaching force.
After the Tumu Crisis of 1449, the Ming court invested heavily in the northern frontier, rebuilding long stretches in fired brick and stone and adding watchtowers, garrisons and double walls near the capital.
Passes such as Jiayuguan and Yumenguan functioned as customs posts: merchants had to show travel permits, and goods were inspected and taxed before entering or leaving the empire.
Discussion question for class: was the Great Wall effective? Consider that it slowed raids and channelled trade, but did not stop the Mongol conquest in the 13th century or the Manchu entry in 1644.
Badaling, about 70 km northwest of Beijing, is the most visited section of the wall. The present structure was built in 1505 during the Ming dynasty.');
INSERT INTO "log_text" (rowid, question, answer, passages) VALUES(4, 'Can you give me a recipe for Neapolitan pizza dough?', '', NULL);
INSERT INTO "log_text" (rowid, question, answer, passages) VALUES(5, 'A question the server fails', NULL, NULL);
COMMIT;
