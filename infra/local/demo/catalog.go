package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gosimple/slug"
	"github.com/jackc/pgx/v5"
)

// The demo catalog is client 1. Every row has a fixed id: the position of its entry
// in the lists below (counting from 1, per table, in the order the rows are listed),
// so events/ and tests can name ids. Append to these lists; never reorder or remove
// entries, or the ids of what follows shift.

// Client is the demo catalog's client id.
const Client int64 = 1

// ClientName is the demo client's name.
const ClientName = "Demo catalog"

// catalogEpoch is the creation time of the first demo row; later rows follow at fixed
// steps, so the "added" orders are deterministic too.
var catalogEpoch = time.Date(2024, time.January, 1, 9, 0, 0, 0, time.UTC)

type text struct {
	lang, text, source string
}

type alias struct {
	lang, title string
}

type demoTag struct {
	name, typ string
}

var demoTags = []demoTag{
	{"Action", "genre"},
	{"Adventure", "genre"},
	{"Comedy", "genre"},
	{"Drama", "genre"},
	{"Fantasy", "genre"},
	{"Horror", "genre"},
	{"Mystery", "genre"},
	{"Romance", "genre"},
	{"Sci-Fi", "genre"},
	{"Slice of Life", "genre"},
	{"Sports", "genre"},
	{"Supernatural", "genre"},
	{"Thriller", "genre"},
	{"Psychological", "genre"},
	{"Martial Arts", "theme"},
	{"Isekai", "theme"},
	{"School Life", "theme"},
	{"Military", "theme"},
	{"Historical", "theme"},
	{"Post-Apocalyptic", "theme"},
	{"Cyberpunk", "theme"},
	{"Music", "theme"},
	{"Time Travel", "theme"},
	{"Crime", "theme"},
	{"Shounen", "demographic"},
	{"Seinen", "demographic"},
	{"Shoujo", "demographic"},
	{"Josei", "demographic"},
	{"Kodomo", "demographic"},
}

type demoPublisher struct {
	name, shortName, country, website, headquarter string
	founded                                        string // YYYY-MM-DD, "" when unknown
	image, imageSource                             string
	descriptions                                   []text
	aliases                                        []alias
}

var demoPublishers = []demoPublisher{
	{
		name: "Kodansha", shortName: "Kodansha", country: "Japan",
		website: "https://www.kodansha.co.jp", headquarter: "Bunkyō, Tokyo", founded: "1909-11-01",
		image: "publishers/kodansha.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Kodansha is one of Japan's largest publishers, known for magazines such as Weekly Shōnen Magazine, Morning and Afternoon, and for series like Attack on Titan and Akira.", "Wikipedia"},
			{"Japanese", "講談社は東京都文京区に本社を置く日本最大級の総合出版社で、「週刊少年マガジン」などの漫画雑誌を発行している。", "Wikipedia"},
		},
		aliases: []alias{{"Japanese", "講談社"}, {"English", "Kodansha Ltd."}},
	},
	{
		name: "Shueisha", shortName: "Shueisha", country: "Japan",
		website: "https://www.shueisha.co.jp", headquarter: "Chiyoda, Tokyo", founded: "1925-08-08",
		image: "publishers/shueisha.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Shueisha publishes Weekly Shōnen Jump, the best-selling manga magazine in Japan, home of One Piece, Dragon Ball and Naruto.", "Wikipedia"},
			{"Japanese", "集英社は「週刊少年ジャンプ」を発行する日本の大手出版社で、一ツ橋グループの中核企業である。", "Wikipedia"},
		},
		aliases: []alias{{"Japanese", "集英社"}, {"English", "Shueisha Inc."}},
	},
	{
		name: "Shogakukan", shortName: "Shogakukan", country: "Japan",
		website: "https://www.shogakukan.co.jp", headquarter: "Chiyoda, Tokyo", founded: "1922-08-08",
		image: "publishers/shogakukan.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Shogakukan is a Japanese publisher of dictionaries, literature and manga, including Weekly Shōnen Sunday and Detective Conan.", "Wikipedia"},
			{"Japanese", "小学館は学習雑誌から創業した日本の総合出版社で、「週刊少年サンデー」などを発行している。", "Wikipedia"},
		},
		aliases: []alias{{"Japanese", "小学館"}, {"English", "Shogakukan Inc."}},
	},
	{
		name: "Viz Media", shortName: "VIZ", country: "United States",
		website: "https://www.viz.com", headquarter: "San Francisco, California",
		image: "publishers/viz-media.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Viz Media is an American publisher of manga and distributor of anime, owned by Shueisha and Shogakukan.", "Wikipedia"},
			{"German", "Viz Media ist ein US-amerikanischer Verlag für Manga und Anime im Besitz von Shueisha und Shogakukan.", "Wikipedia"},
		},
		aliases: []alias{{"English", "VIZ Media LLC"}, {"English", "Viz Communications"}},
	},
	{
		name: "Yen Press", shortName: "Yen", country: "United States",
		website: "https://yenpress.com", headquarter: "New York City, New York",
		image: "publishers/yen-press.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Yen Press publishes manga, light novels and graphic novels in English; it is a joint venture of Kadokawa and Hachette Book Group.", "Wikipedia"},
			{"Japanese", "イェン・プレスはKADOKAWAとアシェット・ブック・グループの合弁による米国の出版社で、漫画やライトノベルの英語版を刊行している。", "Wikipedia"},
		},
		aliases: []alias{{"English", "Yen Press, LLC"}, {"Japanese", "イェン・プレス"}},
	},
	{
		name: "Seven Seas Entertainment", shortName: "Seven Seas", country: "United States",
		website: "https://sevenseasentertainment.com", headquarter: "Los Angeles, California",
		descriptions: []text{
			{"English", "Seven Seas Entertainment is an American publisher of manga, manhwa and light novels in English.", "Wikipedia"},
			{"German", "Seven Seas Entertainment ist ein US-amerikanischer Verlag, der Manga, Manhwa und Light Novels auf Englisch veröffentlicht.", "Wikipedia"},
		},
		aliases: []alias{{"English", "Seven Seas"}},
	},
	{
		name: "Square Enix", shortName: "Square Enix", country: "Japan",
		website: "https://www.square-enix.com", headquarter: "Shinjuku, Tokyo", founded: "2003-04-01",
		image: "publishers/square-enix.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Square Enix is a Japanese video game company that also publishes manga magazines such as Monthly Shōnen Gangan, home of Fullmetal Alchemist.", "Wikipedia"},
			{"Japanese", "スクウェア・エニックスはゲーム会社であると同時に、「月刊少年ガンガン」などの漫画雑誌を発行する出版社でもある。", "Wikipedia"},
		},
		aliases: []alias{{"Japanese", "スクウェア・エニックス"}, {"English", "Square Enix Co., Ltd."}},
	},
	{
		name: "Kadokawa", shortName: "Kadokawa", country: "Japan",
		website: "https://www.kadokawa.co.jp", headquarter: "Chiyoda, Tokyo", founded: "1945-11-10",
		image: "publishers/kadokawa.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Kadokawa is a Japanese publisher of books, manga and light novels, with imprints such as Kadokawa Sneaker Bunko and Dengeki Bunko.", "Wikipedia"},
			{"Japanese", "KADOKAWAは角川書店を前身とする日本の出版社で、ライトノベルや漫画、映像事業を幅広く手がけている。", "Wikipedia"},
		},
		aliases: []alias{{"Japanese", "角川書店"}, {"English", "Kadokawa Corporation"}, {"English", "Kadokawa Shoten"}},
	},
	{
		name: "Hakusensha", shortName: "Hakusensha", country: "Japan",
		website: "https://www.hakusensha.co.jp", headquarter: "Chiyoda, Tokyo", founded: "1973-12-01",
		image: "publishers/hakusensha.png", imageSource: "Wikimedia Commons",
		descriptions: []text{
			{"English", "Hakusensha is a Japanese publisher of the Hitotsubashi Group, known for Hana to Yume and Young Animal.", "Wikipedia"},
			{"Japanese", "白泉社は一ツ橋グループの出版社で、「花とゆめ」や「ヤングアニマル」を発行している。", "Wikipedia"},
		},
		aliases: []alias{{"Japanese", "白泉社"}},
	},
	{
		name: "Akita Shoten", shortName: "Akita", country: "Japan",
		website: "https://www.akitashoten.co.jp", headquarter: "Chiyoda, Tokyo",
		descriptions: []text{
			{"English", "Akita Shoten is a Japanese publisher best known for Weekly Shōnen Champion.", "Wikipedia"},
			{"Japanese", "秋田書店は「週刊少年チャンピオン」で知られる日本の出版社である。", "Wikipedia"},
		},
		aliases: []alias{{"Japanese", "秋田書店"}, {"English", "Akita Publishing"}},
	},
}

type demoRelation struct {
	from, to, typ string // names
}

var demoPublisherRelations = []demoRelation{
	{"Shueisha", "Shogakukan", "Sister company"},
	{"Shogakukan", "Shueisha", "Sister company"},
	{"Shueisha", "Hakusensha", "Sister company"},
	{"Hakusensha", "Shueisha", "Sister company"},
	{"Viz Media", "Shueisha", "Parent company"},
	{"Viz Media", "Shogakukan", "Parent company"},
	{"Shueisha", "Viz Media", "Subsidiary"},
	{"Shogakukan", "Viz Media", "Subsidiary"},
	{"Yen Press", "Kadokawa", "Parent company"},
	{"Kadokawa", "Yen Press", "Subsidiary"},
}

type credit struct {
	contributor string // full name as in demoContributors
	role        string
}

type demoSeries struct {
	name, typ    string
	publishers   []string // names
	tags         []string // names
	aliases      []alias
	descriptions []text
	credits      []credit
}

const (
	manga      = "Manga"
	lightNovel = "Light Novel"
)

func author(name string) []credit { return []credit{{name, "author"}} }

func en(s string) text { return text{lang: "English", text: s} }

func ja(s string) text { return text{lang: "Japanese", text: s} }

var demoSeriesList = []demoSeries{
	{name: "One Piece", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:    []string{"Action", "Adventure", "Comedy", "Fantasy", "Shounen"},
		aliases: []alias{{"Japanese", "ワンピース"}},
		descriptions: []text{
			en("Monkey D. Luffy sets out to sea to find the legendary treasure One Piece and become King of the Pirates."),
			ja("海賊王を目指す少年モンキー・D・ルフィと仲間たちの冒険を描く海洋ロマン。"),
		},
		credits: author("Eiichiro Oda")},
	{name: "Naruto", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:    []string{"Action", "Adventure", "Martial Arts", "Shounen"},
		aliases: []alias{{"Japanese", "NARUTO -ナルト-"}},
		descriptions: []text{
			en("Naruto Uzumaki, a young ninja shunned by his village, strives for recognition and the title of Hokage."),
			ja("落ちこぼれの忍者うずまきナルトが、里の長である火影を目指して成長していく物語。"),
		},
		credits: author("Masashi Kishimoto")},
	{name: "Bleach", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Supernatural", "Shounen"},
		aliases:      []alias{{"Japanese", "BLEACH"}},
		descriptions: []text{en("Ichigo Kurosaki gains the powers of a Soul Reaper and defends the living from evil spirits.")},
		credits:      author("Tite Kubo")},
	{name: "Dragon Ball", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Adventure", "Comedy", "Martial Arts", "Shounen"},
		aliases:      []alias{{"Japanese", "ドラゴンボール"}},
		descriptions: []text{en("Goku, a boy with a monkey tail and superhuman strength, searches for the seven Dragon Balls.")},
		credits:      author("Akira Toriyama")},
	{name: "Jujutsu Kaisen", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Horror", "Supernatural", "School Life", "Shounen"},
		aliases:      []alias{{"Japanese", "呪術廻戦"}, {"English", "JJK"}},
		descriptions: []text{en("Yuji Itadori swallows a cursed finger and joins a school of sorcerers who fight curses.")},
		credits:      author("Gege Akutami")},
	{name: "Demon Slayer: Kimetsu no Yaiba", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:    []string{"Action", "Historical", "Supernatural", "Shounen"},
		aliases: []alias{{"Japanese", "鬼滅の刃"}, {"English", "Demon Slayer"}},
		descriptions: []text{
			en("After demons slaughter his family, Tanjiro Kamado becomes a demon slayer to turn his sister back into a human."),
			ja("鬼に家族を殺された竈門炭治郎が、鬼になった妹を人間に戻すために鬼殺隊に入る。"),
		},
		credits: author("Koyoharu Gotouge")},
	{name: "My Hero Academia", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Sci-Fi", "School Life", "Shounen"},
		aliases:      []alias{{"Japanese", "僕のヒーローアカデミア"}, {"Romaji", "Boku no Hero Academia"}},
		descriptions: []text{en("In a world where most people have superpowers, powerless Izuku Midoriya inherits the power of the greatest hero.")},
		credits:      author("Kohei Horikoshi")},
	{name: "Chainsaw Man", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Horror", "Supernatural", "Shounen"},
		aliases:      []alias{{"Japanese", "チェンソーマン"}},
		descriptions: []text{en("Debt-ridden devil hunter Denji merges with his chainsaw devil Pochita and becomes Chainsaw Man.")},
		credits:      author("Tatsuki Fujimoto")},
	{name: "Hunter x Hunter", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Adventure", "Fantasy", "Shounen"},
		aliases:      []alias{{"Japanese", "HUNTER×HUNTER"}},
		descriptions: []text{en("Gon Freecss becomes a Hunter to find the father who left him to follow the same calling.")},
		credits:      author("Yoshihiro Togashi")},
	{name: "Spy x Family", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:    []string{"Action", "Comedy", "Slice of Life", "Shounen"},
		aliases: []alias{{"Japanese", "SPY×FAMILY"}},
		descriptions: []text{
			en("A spy, an assassin and a telepath pretend to be a family, each hiding their true identity from the others."),
			ja("スパイ、殺し屋、超能力者が、互いの正体を隠しながら仮初めの家族として暮らす。"),
		}},
	{name: "Death Note", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Mystery", "Psychological", "Supernatural", "Thriller", "Shounen"},
		aliases:      []alias{{"Japanese", "デスノート"}},
		descriptions: []text{en("A student finds a notebook that kills anyone whose name is written in it, and a detective sets out to catch him.")}},
	{name: "Haikyu!!", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Comedy", "Sports", "School Life", "Shounen"},
		aliases:      []alias{{"Japanese", "ハイキュー!!"}},
		descriptions: []text{en("Short but determined, Shoyo Hinata joins his high school's volleyball team to prove that height is not everything.")}},
	{name: "The Promised Neverland", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Horror", "Mystery", "Thriller", "Shounen"},
		aliases:      []alias{{"Japanese", "約束のネバーランド"}, {"Romaji", "Yakusoku no Neverland"}},
		descriptions: []text{en("The children of an idyllic orphanage discover the dark truth about their home and plan an escape.")}},
	{name: "Dr. Stone", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Adventure", "Sci-Fi", "Post-Apocalyptic", "Shounen"},
		aliases:      []alias{{"Japanese", "Dr.STONE"}},
		descriptions: []text{en("Thousands of years after humanity is turned to stone, the genius Senku sets out to rebuild civilization with science.")}},
	{name: "Slam Dunk", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:    []string{"Comedy", "Sports", "School Life", "Shounen"},
		aliases: []alias{{"Japanese", "スラムダンク"}},
		descriptions: []text{
			en("Delinquent Hanamichi Sakuragi joins the basketball team to impress a girl and discovers a talent for the game."),
			ja("不良少年の桜木花道が、片思いの相手に近づくためにバスケットボール部に入部する。"),
		},
		credits: author("Takehiko Inoue")},
	{name: "JoJo's Bizarre Adventure", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Adventure", "Supernatural", "Shounen"},
		aliases:      []alias{{"Japanese", "ジョジョの奇妙な冒険"}, {"English", "JoJo"}},
		descriptions: []text{en("Generations of the Joestar family battle supernatural foes, from vampires to wielders of psychic Stands.")}},
	{name: "Kaguya-sama: Love Is War", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Comedy", "Romance", "School Life", "Seinen"},
		aliases:      []alias{{"Japanese", "かぐや様は告らせたい"}},
		descriptions: []text{en("Two genius student council members are in love, but each schemes to make the other confess first.")}},
	{name: "Tokyo Ghoul", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Horror", "Psychological", "Seinen"},
		aliases:      []alias{{"Japanese", "東京喰種トーキョーグール"}},
		descriptions: []text{en("After a deadly encounter, student Ken Kaneki becomes a half-ghoul who must survive on human flesh.")}},
	{name: "Nana", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Drama", "Romance", "Music", "Josei"},
		aliases:      []alias{{"Japanese", "NANA -ナナ-"}},
		descriptions: []text{en("Two young women named Nana meet on a train to Tokyo and end up sharing an apartment and their lives.")}},
	{name: "One-Punch Man", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Comedy", "Sci-Fi", "Seinen"},
		aliases:      []alias{{"Japanese", "ワンパンマン"}},
		descriptions: []text{en("Saitama can defeat any opponent with a single punch and is bored by how easy heroism has become.")},
		credits:      []credit{{"ONE", "story"}, {"Yusuke Murata", "art"}}},
	{name: "Sakamoto Days", typ: manga, publishers: []string{"Shueisha", "Viz Media"},
		tags:         []string{"Action", "Comedy", "Crime", "Shounen"},
		aliases:      []alias{{"Japanese", "SAKAMOTO DAYS"}},
		descriptions: []text{en("A legendary hitman retires to run a convenience store, but his past keeps coming back to collect.")}},
	{name: "Attack on Titan", typ: manga, publishers: []string{"Kodansha"},
		tags:    []string{"Action", "Drama", "Fantasy", "Military", "Post-Apocalyptic", "Shounen"},
		aliases: []alias{{"Japanese", "進撃の巨人"}, {"Romaji", "Shingeki no Kyojin"}},
		descriptions: []text{
			en("Humanity lives behind enormous walls to escape man-eating Titans, until the day the walls are breached."),
			ja("人類を捕食する巨人から身を守るため、壁の内側で暮らす人々の戦いを描く。"),
		},
		credits: author("Hajime Isayama")},
	{name: "Akira", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Action", "Sci-Fi", "Cyberpunk", "Post-Apocalyptic", "Seinen"},
		aliases:      []alias{{"Japanese", "AKIRA"}},
		descriptions: []text{en("In post-war Neo-Tokyo, a biker gang member gains psychic powers that threaten the whole city.")}},
	{name: "Ghost in the Shell", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Action", "Sci-Fi", "Cyberpunk", "Crime", "Seinen"},
		aliases:      []alias{{"Japanese", "攻殻機動隊"}, {"Romaji", "Koukaku Kidoutai"}},
		descriptions: []text{en("Cyborg Major Motoko Kusanagi leads a counter-cyberterrorism unit hunting a mysterious hacker.")}},
	{name: "Vinland Saga", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Action", "Adventure", "Drama", "Historical", "Seinen"},
		aliases:      []alias{{"Japanese", "ヴィンランド・サガ"}},
		descriptions: []text{en("Young Thorfinn fights among Viking mercenaries to avenge his father, then searches for a land without war.")},
		credits:      author("Makoto Yukimura")},
	{name: "Blue Lock", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Drama", "Psychological", "Sports", "Shounen"},
		aliases:      []alias{{"Japanese", "ブルーロック"}},
		descriptions: []text{en("Three hundred young strikers compete in a ruthless training facility to become Japan's best forward.")}},
	{name: "Tokyo Revengers", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Action", "Drama", "Time Travel", "Crime", "Shounen"},
		aliases:      []alias{{"Japanese", "東京卍リベンジャーズ"}},
		descriptions: []text{en("Takemichi travels back to his middle school days to save his ex-girlfriend from the gang that will kill her.")}},
	{name: "Fairy Tail", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Action", "Adventure", "Comedy", "Fantasy", "Shounen"},
		aliases:      []alias{{"Japanese", "FAIRY TAIL"}},
		descriptions: []text{en("Celestial wizard Lucy joins the rowdy Fairy Tail guild and teams up with the fire dragon slayer Natsu.")}},
	{name: "The Ancient Magus' Bride", typ: manga, publishers: []string{"Seven Seas Entertainment"},
		tags:         []string{"Drama", "Fantasy", "Romance", "Supernatural"},
		aliases:      []alias{{"Japanese", "魔法使いの嫁"}, {"Romaji", "Mahoutsukai no Yome"}},
		descriptions: []text{en("Chise Hatori is sold at auction to a mysterious mage who makes her his apprentice and his bride.")}},
	{name: "Sailor Moon", typ: manga, publishers: []string{"Kodansha"},
		tags:    []string{"Action", "Fantasy", "Romance", "Shoujo"},
		aliases: []alias{{"Japanese", "美少女戦士セーラームーン"}, {"English", "Pretty Guardian Sailor Moon"}},
		descriptions: []text{
			en("Schoolgirl Usagi Tsukino becomes Sailor Moon and gathers the Sailor Guardians to fight the Dark Kingdom."),
			ja("中学生の月野うさぎがセーラームーンに変身し、仲間のセーラー戦士とともに戦う。"),
		},
		credits: author("Naoko Takeuchi")},
	{name: "Cardcaptor Sakura", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Adventure", "Comedy", "Fantasy", "Shoujo"},
		aliases:      []alias{{"Japanese", "カードキャプターさくら"}},
		descriptions: []text{en("Ten-year-old Sakura accidentally releases the magical Clow Cards and must capture them again.")}},
	{name: "Vagabond", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Action", "Drama", "Historical", "Martial Arts", "Seinen"},
		aliases:      []alias{{"Japanese", "バガボンド"}},
		descriptions: []text{en("A fictionalized account of the life of the swordsman Miyamoto Musashi on his path to enlightenment.")},
		credits:      author("Takehiko Inoue")},
	{name: "Parasyte", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Action", "Horror", "Sci-Fi", "Seinen"},
		aliases:      []alias{{"Japanese", "寄生獣"}, {"Romaji", "Kiseijuu"}},
		descriptions: []text{en("A parasitic alien fails to take over Shinichi's brain and settles in his right hand instead.")}},
	{name: "A Silent Voice", typ: manga, publishers: []string{"Kodansha"},
		tags:         []string{"Drama", "Romance", "School Life", "Shounen"},
		aliases:      []alias{{"Japanese", "聲の形"}, {"Romaji", "Koe no Katachi"}},
		descriptions: []text{en("A former bully seeks redemption from the deaf girl he tormented in elementary school.")}},
	{name: "Detective Conan", typ: manga, publishers: []string{"Shogakukan", "Viz Media"},
		tags:    []string{"Comedy", "Mystery", "Crime", "Shounen"},
		aliases: []alias{{"Japanese", "名探偵コナン"}, {"English", "Case Closed"}},
		descriptions: []text{
			en("Teenage detective Shinichi Kudo is shrunk into a child's body and solves cases as Conan Edogawa."),
			ja("高校生探偵の工藤新一が、薬で体を縮められ江戸川コナンとして事件を解決していく。"),
		}},
	{name: "Inuyasha", typ: manga, publishers: []string{"Shogakukan", "Viz Media"},
		tags:         []string{"Action", "Adventure", "Romance", "Historical", "Shounen"},
		aliases:      []alias{{"Japanese", "犬夜叉"}},
		descriptions: []text{en("Kagome falls through a well into feudal Japan and joins the half-demon Inuyasha to recover the Shikon Jewel.")},
		credits:      author("Rumiko Takahashi")},
	{name: "Frieren: Beyond Journey's End", typ: manga, publishers: []string{"Shogakukan", "Viz Media"},
		tags:    []string{"Adventure", "Drama", "Fantasy", "Slice of Life", "Shounen"},
		aliases: []alias{{"Japanese", "葬送のフリーレン"}, {"Romaji", "Sousou no Frieren"}, {"English", "Frieren"}},
		descriptions: []text{
			en("After the hero's party defeats the Demon King, the long-lived elf mage Frieren learns what her companions meant to her."),
			ja("魔王を倒した勇者一行のその後を、長命なエルフの魔法使いフリーレンの視点で描く。"),
		}},
	{name: "Monster", typ: manga, publishers: []string{"Shogakukan", "Viz Media"},
		tags:         []string{"Mystery", "Psychological", "Thriller", "Crime", "Seinen"},
		aliases:      []alias{{"Japanese", "MONSTER"}},
		descriptions: []text{en("Surgeon Kenzo Tenma saves a boy's life and years later hunts the serial killer that boy has become.")},
		credits:      author("Naoki Urasawa")},
	{name: "20th Century Boys", typ: manga, publishers: []string{"Shogakukan", "Viz Media"},
		tags:         []string{"Mystery", "Sci-Fi", "Thriller", "Seinen"},
		aliases:      []alias{{"Japanese", "20世紀少年"}, {"Romaji", "Nijusseiki Shounen"}},
		descriptions: []text{en("Kenji and his childhood friends realize that a doomsday cult is following the plot they invented as kids.")},
		credits:      author("Naoki Urasawa")},
	{name: "Ranma ½", typ: manga, publishers: []string{"Shogakukan", "Viz Media"},
		tags:         []string{"Comedy", "Martial Arts", "Romance", "Shounen"},
		aliases:      []alias{{"Japanese", "らんま½"}, {"English", "Ranma 1/2"}},
		descriptions: []text{en("Martial artist Ranma Saotome turns into a girl whenever he is splashed with cold water.")},
		credits:      author("Rumiko Takahashi")},
	{name: "Made in Abyss", typ: manga, publishers: []string{"Seven Seas Entertainment"},
		tags:         []string{"Adventure", "Fantasy", "Mystery", "Seinen"},
		aliases:      []alias{{"Japanese", "メイドインアビス"}},
		descriptions: []text{en("Orphan Riko descends into the Abyss, a vast chasm full of relics and monsters, to find her mother.")}},
	{name: "Goodnight Punpun", typ: manga, publishers: []string{"Shogakukan"},
		tags:         []string{"Drama", "Psychological", "Slice of Life", "Seinen"},
		aliases:      []alias{{"Japanese", "おやすみプンプン"}, {"Romaji", "Oyasumi Punpun"}},
		descriptions: []text{en("The coming of age of Punpun Onodera, drawn as a simple bird, through a troubled childhood and youth.")},
		credits:      author("Inio Asano")},
	{name: "Komi Can't Communicate", typ: manga, publishers: []string{"Shogakukan", "Viz Media"},
		tags:         []string{"Comedy", "Romance", "School Life", "Shounen"},
		aliases:      []alias{{"Japanese", "古見さんは、コミュ症です。"}, {"Romaji", "Komi-san wa, Komyushou desu."}},
		descriptions: []text{en("Shoko Komi has a severe communication disorder, and her classmate Tadano helps her make a hundred friends.")}},
	{name: "Doraemon", typ: manga, publishers: []string{"Shogakukan"},
		tags:    []string{"Comedy", "Sci-Fi", "Time Travel", "Kodomo"},
		aliases: []alias{{"Japanese", "ドラえもん"}},
		descriptions: []text{
			en("A robotic cat from the 22nd century travels back in time to help the hapless schoolboy Nobita."),
			ja("22世紀から来たネコ型ロボットのドラえもんが、ひみつ道具でのび太を助ける。"),
		}},
	{name: "Fullmetal Alchemist", typ: manga, publishers: []string{"Square Enix", "Viz Media"},
		tags:    []string{"Action", "Adventure", "Fantasy", "Military", "Shounen"},
		aliases: []alias{{"Japanese", "鋼の錬金術師"}, {"Romaji", "Hagane no Renkinjutsushi"}},
		descriptions: []text{
			en("Alchemist brothers Edward and Alphonse Elric search for the Philosopher's Stone to restore their bodies."),
			ja("錬金術で失った体を取り戻すため、エルリック兄弟が賢者の石を探して旅をする。"),
		},
		credits: author("Hiromu Arakawa")},
	{name: "Soul Eater", typ: manga, publishers: []string{"Square Enix", "Yen Press"},
		tags:         []string{"Action", "Comedy", "Supernatural", "School Life", "Shounen"},
		aliases:      []alias{{"Japanese", "ソウルイーター"}},
		descriptions: []text{en("Students of the Death Weapon Meister Academy hunt evil souls to turn their partners into death scythes.")}},
	{name: "The Apothecary Diaries", typ: manga, publishers: []string{"Square Enix"},
		tags:         []string{"Drama", "Mystery", "Historical", "Seinen"},
		aliases:      []alias{{"Japanese", "薬屋のひとりごと"}, {"Romaji", "Kusuriya no Hitorigoto"}},
		descriptions: []text{en("Maomao, an apothecary sold into the imperial court, uses her knowledge of medicine and poison to solve its mysteries.")}},
	{name: "Horimiya", typ: manga, publishers: []string{"Square Enix", "Yen Press"},
		tags:         []string{"Comedy", "Romance", "School Life", "Shounen"},
		aliases:      []alias{{"Japanese", "ホリミヤ"}},
		descriptions: []text{en("Popular Kyoko Hori and gloomy Izumi Miyamura discover each other's hidden sides outside school.")}},
	{name: "Re:Zero − Starting Life in Another World", typ: lightNovel, publishers: []string{"Kadokawa", "Yen Press"},
		tags:         []string{"Drama", "Fantasy", "Psychological", "Isekai"},
		aliases:      []alias{{"Japanese", "Re:ゼロから始める異世界生活"}, {"English", "Re:Zero"}},
		descriptions: []text{en("Subaru Natsuki is summoned to another world, where each death sends him back to an earlier point in time.")}},
	{name: "Overlord", typ: lightNovel, publishers: []string{"Kadokawa", "Yen Press"},
		tags:         []string{"Action", "Fantasy", "Isekai"},
		aliases:      []alias{{"Japanese", "オーバーロード"}},
		descriptions: []text{en("When an online game shuts down, its top player remains trapped as his undead avatar Ainz Ooal Gown.")}},
	{name: "Sword Art Online", typ: lightNovel, publishers: []string{"Kadokawa", "Yen Press"},
		tags:         []string{"Action", "Adventure", "Romance", "Sci-Fi"},
		aliases:      []alias{{"Japanese", "ソードアート・オンライン"}, {"English", "SAO"}},
		descriptions: []text{en("Ten thousand players are trapped in a virtual reality game where dying in the game means dying in real life.")}},
	{name: "KonoSuba: God's Blessing on This Wonderful World!", typ: lightNovel, publishers: []string{"Kadokawa", "Yen Press"},
		tags:         []string{"Comedy", "Fantasy", "Isekai"},
		aliases:      []alias{{"Japanese", "この素晴らしい世界に祝福を!"}, {"English", "KonoSuba"}},
		descriptions: []text{en("Reborn in a fantasy world, shut-in Kazuma forms a hopeless party with a goddess, an archwizard and a crusader.")}},
	{name: "Neon Genesis Evangelion", typ: manga, publishers: []string{"Kadokawa", "Viz Media"},
		tags:         []string{"Action", "Psychological", "Sci-Fi", "Post-Apocalyptic", "Shounen"},
		aliases:      []alias{{"Japanese", "新世紀エヴァンゲリオン"}, {"English", "Evangelion"}},
		descriptions: []text{en("Fourteen-year-old Shinji Ikari is recruited by his father to pilot a giant bio-machine against the Angels.")}},
	{name: "Berserk", typ: manga, publishers: []string{"Hakusensha"},
		tags:    []string{"Action", "Fantasy", "Horror", "Seinen"},
		aliases: []alias{{"Japanese", "ベルセルク"}},
		descriptions: []text{
			en("Guts, a lone mercenary, wages war against demonic apostles and against Griffith, his former friend."),
			ja("孤高の剣士ガッツが、かつての友グリフィスと魔の存在に立ち向かうダークファンタジー。"),
		},
		credits: author("Kentaro Miura")},
	{name: "Fruits Basket", typ: manga, publishers: []string{"Hakusensha", "Yen Press"},
		tags:         []string{"Comedy", "Drama", "Romance", "Supernatural", "Shoujo"},
		aliases:      []alias{{"Japanese", "フルーツバスケット"}, {"English", "Furuba"}},
		descriptions: []text{en("Orphaned Tohru Honda discovers that members of the Soma family turn into animals of the Chinese zodiac.")}},
	{name: "Ouran High School Host Club", typ: manga, publishers: []string{"Hakusensha", "Viz Media"},
		tags:         []string{"Comedy", "Romance", "School Life", "Shoujo"},
		aliases:      []alias{{"Japanese", "桜蘭高校ホスト部"}},
		descriptions: []text{en("Scholarship student Haruhi breaks an expensive vase and must work off the debt in the elite school's host club.")}},
	{name: "Skip Beat!", typ: manga, publishers: []string{"Hakusensha", "Viz Media"},
		tags:         []string{"Comedy", "Drama", "Romance", "Shoujo"},
		aliases:      []alias{{"Japanese", "スキップ・ビート!"}},
		descriptions: []text{en("Betrayed by the pop idol she supported, Kyoko Mogami enters show business to get her revenge.")}},
	{name: "Black Jack", typ: manga, publishers: []string{"Akita Shoten"},
		tags:         []string{"Drama", "Mystery", "Shounen"},
		aliases:      []alias{{"Japanese", "ブラック・ジャック"}},
		descriptions: []text{en("An unlicensed surgeon of legendary skill takes on the cases no one else can, for enormous fees.")}},
	{name: "Baki the Grappler", typ: manga, publishers: []string{"Akita Shoten"},
		tags:         []string{"Action", "Martial Arts", "Sports", "Shounen"},
		aliases:      []alias{{"Japanese", "グラップラー刃牙"}, {"English", "Baki"}},
		descriptions: []text{en("Teenage fighter Baki Hanma trains relentlessly to surpass his father, the strongest creature on earth.")}},
	{name: "Beastars", typ: manga, publishers: []string{"Akita Shoten"},
		tags:         []string{"Drama", "Mystery", "Psychological", "Romance", "Shounen"},
		aliases:      []alias{{"Japanese", "BEASTARS"}},
		descriptions: []text{en("Legoshi, a gentle wolf at a school of carnivores and herbivores, struggles with his instincts after a murder on campus.")}},
}

type demoContributor struct {
	first, last  string // last "" is stored as NULL
	gender       string // "" is stored as NULL
	links        []string
	aliases      []alias
	descriptions []text
}

func (c demoContributor) fullName() string { return strings.TrimSpace(c.first + " " + c.last) }

func wiki(page string) []string { return []string{"https://en.wikipedia.org/wiki/" + page} }

var demoContributors = []demoContributor{
	{first: "Eiichiro", last: "Oda", gender: "male", links: wiki("Eiichiro_Oda"),
		aliases:      []alias{{"Japanese", "尾田栄一郎"}},
		descriptions: []text{{"English", "Manga artist best known as the creator of One Piece.", "Wikipedia"}}},
	{first: "Masashi", last: "Kishimoto", gender: "male", links: wiki("Masashi_Kishimoto"),
		aliases:      []alias{{"Japanese", "岸本斉史"}},
		descriptions: []text{{"English", "Manga artist who created Naruto.", "Wikipedia"}}},
	{first: "Tite", last: "Kubo", gender: "male",
		aliases:      []alias{{"Japanese", "久保帯人"}},
		descriptions: []text{{"English", "Manga artist who created Bleach.", "Wikipedia"}}},
	{first: "Akira", last: "Toriyama", gender: "male", links: wiki("Akira_Toriyama"),
		aliases: []alias{{"Japanese", "鳥山明"}},
		descriptions: []text{
			{"English", "Manga artist and character designer, creator of Dr. Slump and Dragon Ball.", "Wikipedia"},
			{"Japanese", "『Dr.スランプ』『ドラゴンボール』で知られる漫画家。", "Wikipedia"},
		}},
	{first: "Gege", last: "Akutami",
		aliases:      []alias{{"Japanese", "芥見下々"}},
		descriptions: []text{{"English", "Manga artist who created Jujutsu Kaisen.", ""}}},
	{first: "Koyoharu", last: "Gotouge",
		aliases:      []alias{{"Japanese", "吾峠呼世晴"}},
		descriptions: []text{{"English", "Manga artist who created Demon Slayer: Kimetsu no Yaiba.", ""}}},
	{first: "Kohei", last: "Horikoshi", gender: "male",
		aliases:      []alias{{"Japanese", "堀越耕平"}},
		descriptions: []text{{"English", "Manga artist who created My Hero Academia.", ""}}},
	{first: "Tatsuki", last: "Fujimoto", gender: "male", links: wiki("Tatsuki_Fujimoto"),
		aliases:      []alias{{"Japanese", "藤本タツキ"}},
		descriptions: []text{{"English", "Manga artist who created Fire Punch and Chainsaw Man.", "Wikipedia"}}},
	{first: "Yoshihiro", last: "Togashi", gender: "male", links: wiki("Yoshihiro_Togashi"),
		aliases:      []alias{{"Japanese", "冨樫義博"}},
		descriptions: []text{{"English", "Manga artist who created YuYu Hakusho and Hunter x Hunter.", "Wikipedia"}}},
	{first: "Naoko", last: "Takeuchi", gender: "female", links: wiki("Naoko_Takeuchi"),
		aliases:      []alias{{"Japanese", "武内直子"}},
		descriptions: []text{{"English", "Manga artist who created Sailor Moon.", "Wikipedia"}}},
	{first: "Hajime", last: "Isayama", gender: "male", links: wiki("Hajime_Isayama"),
		aliases:      []alias{{"Japanese", "諫山創"}},
		descriptions: []text{{"English", "Manga artist who created Attack on Titan.", "Wikipedia"}}},
	{first: "Makoto", last: "Yukimura", gender: "male",
		aliases:      []alias{{"Japanese", "幸村誠"}},
		descriptions: []text{{"English", "Manga artist who created Planetes and Vinland Saga.", ""}}},
	{first: "Takehiko", last: "Inoue", gender: "male", links: wiki("Takehiko_Inoue"),
		aliases:      []alias{{"Japanese", "井上雄彦"}},
		descriptions: []text{{"English", "Manga artist who created Slam Dunk, Vagabond and Real.", "Wikipedia"}}},
	{first: "Naoki", last: "Urasawa", gender: "male", links: wiki("Naoki_Urasawa"),
		aliases:      []alias{{"Japanese", "浦沢直樹"}},
		descriptions: []text{{"English", "Manga artist who created Monster, 20th Century Boys and Pluto.", "Wikipedia"}}},
	{first: "Rumiko", last: "Takahashi", gender: "female", links: wiki("Rumiko_Takahashi"),
		aliases:      []alias{{"Japanese", "高橋留美子"}},
		descriptions: []text{{"English", "Manga artist who created Urusei Yatsura, Ranma ½ and Inuyasha.", "Wikipedia"}}},
	{first: "Hiromu", last: "Arakawa", gender: "female", links: wiki("Hiromu_Arakawa"),
		aliases:      []alias{{"Japanese", "荒川弘"}},
		descriptions: []text{{"English", "Manga artist who created Fullmetal Alchemist and Silver Spoon.", "Wikipedia"}}},
	{first: "Kentaro", last: "Miura", gender: "male", links: wiki("Kentaro_Miura"),
		aliases:      []alias{{"Japanese", "三浦建太郎"}},
		descriptions: []text{{"English", "Manga artist who created Berserk.", "Wikipedia"}}},
	{first: "ONE", gender: "male", links: wiki("One_(manga_artist)"),
		aliases:      []alias{{"Japanese", "ワン"}},
		descriptions: []text{{"English", "Manga artist known by his pen name, creator of One-Punch Man and Mob Psycho 100.", "Wikipedia"}}},
	{first: "Yusuke", last: "Murata", gender: "male", links: wiki("Yusuke_Murata"),
		aliases:      []alias{{"Japanese", "村田雄介"}},
		descriptions: []text{{"English", "Manga artist who drew Eyeshield 21 and the One-Punch Man manga.", "Wikipedia"}}},
	{first: "Inio", last: "Asano", gender: "male",
		aliases:      []alias{{"Japanese", "浅野いにお"}},
		descriptions: []text{{"English", "Manga artist who created Solanin and Goodnight Punpun.", ""}}},
}

var demoContributorRelations = []demoRelation{
	{"ONE", "Yusuke Murata", "Collaborator"},
	{"Yusuke Murata", "ONE", "Collaborator"},
	{"Yoshihiro Togashi", "Naoko Takeuchi", "Spouse"},
	{"Naoko Takeuchi", "Yoshihiro Togashi", "Spouse"},
}

// volumeCount is the number of volumes of the i-th demo series (from 0): 1 to 5.
func volumeCount(i int) int { return 1 + (i*3)%5 }

// nsfwSeries are the demo series whose volumes are flagged nsfw.
var nsfwSeries = map[string]bool{"Berserk": true, "Tokyo Ghoul": true, "Chainsaw Man": true}

// table is the rows of one table as column arrays, inserted with one statement.
// lastID is the largest fixed id among them, 0 for tables without identity ids.
type table struct {
	name   string
	sql    string
	cols   []any
	lastID int64
}

// catalogTables builds the demo catalog, table by table in foreign-key order. A name
// in the lists above that names nothing is an error.
func catalogTables() ([]table, error) {
	at := func(i int, step time.Duration) time.Time { return catalogEpoch.Add(time.Duration(i) * step) }
	var missing []string
	must := func(ids map[string]int64, name string) int64 {
		id, ok := ids[name]
		if !ok {
			missing = append(missing, name)
		}
		return id
	}

	tagIDs := map[string]int64{}
	var tg struct {
		id         []int64
		name, typs []string
	}
	for i, t := range demoTags {
		id := int64(i + 1)
		tagIDs[t.name] = id
		tg.id, tg.name, tg.typs = append(tg.id, id), append(tg.name, t.name), append(tg.typs, t.typ)
	}

	pubIDs := map[string]int64{}
	var pb struct {
		id                                                                   []int64
		name, short, slug, country, website, hq, image, imageSource, founded []string
		created                                                              []time.Time
	}
	var pd struct {
		id, pub             []int64
		text, lang, sources []string
	}
	var pa struct {
		id, pub     []int64
		title, lang []string
	}
	for i, p := range demoPublishers {
		id := int64(i + 1)
		pubIDs[p.name] = id
		pb.id = append(pb.id, id)
		pb.name = append(pb.name, p.name)
		pb.short = append(pb.short, p.shortName)
		pb.slug = append(pb.slug, slug.Make(p.name))
		pb.country = append(pb.country, p.country)
		pb.website = append(pb.website, p.website)
		pb.hq = append(pb.hq, p.headquarter)
		pb.image = append(pb.image, p.image)
		pb.imageSource = append(pb.imageSource, p.imageSource)
		pb.founded = append(pb.founded, p.founded)
		pb.created = append(pb.created, at(i, 24*time.Hour))
		for _, d := range p.descriptions {
			pd.id = append(pd.id, int64(len(pd.id)+1))
			pd.pub, pd.text, pd.lang, pd.sources = append(pd.pub, id), append(pd.text, d.text), append(pd.lang, d.lang), append(pd.sources, d.source)
		}
		for _, a := range p.aliases {
			pa.id = append(pa.id, int64(len(pa.id)+1))
			pa.pub, pa.title, pa.lang = append(pa.pub, id), append(pa.title, a.title), append(pa.lang, a.lang)
		}
	}
	var pr struct {
		id, from, to []int64
		typs         []string
	}
	for i, r := range demoPublisherRelations {
		pr.id = append(pr.id, int64(i+1))
		pr.from, pr.to, pr.typs = append(pr.from, must(pubIDs, r.from)), append(pr.to, must(pubIDs, r.to)), append(pr.typs, r.typ)
	}

	contributorIDs := map[string]int64{}
	var ct struct {
		id                             []int64
		first, slugs                   []string
		last, gender                   []*string
		created                        []time.Time
		linkID, linkC                  []int64
		linkURL                        []string
		aliasID, aliasC                []int64
		aliasTitle, aliasLang          []string
		descID, descC                  []int64
		descText, descLang, descSource []string
		relID, relFrom, relTo          []int64
		relType                        []string
	}
	for i, c := range demoContributors {
		id := int64(i + 1)
		contributorIDs[c.fullName()] = id
		ct.id = append(ct.id, id)
		ct.first = append(ct.first, c.first)
		ct.last = append(ct.last, nullable(c.last))
		ct.gender = append(ct.gender, nullable(c.gender))
		ct.slugs = append(ct.slugs, slug.Make(c.fullName()))
		ct.created = append(ct.created, at(i, time.Hour))
		for _, l := range c.links {
			ct.linkID = append(ct.linkID, int64(len(ct.linkID)+1))
			ct.linkC, ct.linkURL = append(ct.linkC, id), append(ct.linkURL, l)
		}
		for _, a := range c.aliases {
			ct.aliasID = append(ct.aliasID, int64(len(ct.aliasID)+1))
			ct.aliasC, ct.aliasTitle, ct.aliasLang = append(ct.aliasC, id), append(ct.aliasTitle, a.title), append(ct.aliasLang, a.lang)
		}
		for _, d := range c.descriptions {
			ct.descID = append(ct.descID, int64(len(ct.descID)+1))
			ct.descC, ct.descText, ct.descLang, ct.descSource = append(ct.descC, id), append(ct.descText, d.text), append(ct.descLang, d.lang), append(ct.descSource, d.source)
		}
	}
	for i, r := range demoContributorRelations {
		ct.relID = append(ct.relID, int64(i+1))
		ct.relFrom, ct.relTo, ct.relType = append(ct.relFrom, must(contributorIDs, r.from)), append(ct.relTo, must(contributorIDs, r.to)), append(ct.relType, r.typ)
	}

	var sr struct {
		id                    []int64
		name, slugs, typs     []string
		created               []time.Time
		aliasID, aliasS       []int64
		aliasTitle, aliasLang []string
		descID, descS         []int64
		descLang, descText    []string
		volID, volS           []int64
		volNumber, volNSFW    []int32
		volTitle, volCover    []string
		volRatio              []float32
		volCreated            []time.Time
		tagS, tagT            []int64
		pubS, pubP            []int64
		creditS, creditC      []int64
		creditRole            []string
	}
	for i, s := range demoSeriesList {
		id := int64(i + 1)
		sl := slug.Make(s.name)
		sr.id = append(sr.id, id)
		sr.name = append(sr.name, s.name)
		sr.slugs = append(sr.slugs, sl)
		sr.typs = append(sr.typs, s.typ)
		sr.created = append(sr.created, at(i, 6*time.Hour))
		for _, a := range s.aliases {
			sr.aliasID = append(sr.aliasID, int64(len(sr.aliasID)+1))
			sr.aliasS, sr.aliasTitle, sr.aliasLang = append(sr.aliasS, id), append(sr.aliasTitle, a.title), append(sr.aliasLang, a.lang)
		}
		for _, d := range s.descriptions {
			sr.descID = append(sr.descID, int64(len(sr.descID)+1))
			sr.descS, sr.descLang, sr.descText = append(sr.descS, id), append(sr.descLang, d.lang), append(sr.descText, d.text)
		}
		var nsfw int32
		if nsfwSeries[s.name] {
			nsfw = 1
		}
		ratio := float32(0.7)
		if s.typ == lightNovel {
			ratio = 0.71
		}
		for n := 1; n <= volumeCount(i); n++ {
			sr.volID = append(sr.volID, int64(len(sr.volID)+1))
			sr.volS = append(sr.volS, id)
			sr.volNumber = append(sr.volNumber, int32(n))
			sr.volTitle = append(sr.volTitle, fmt.Sprintf("Volume %d", n))
			sr.volCover = append(sr.volCover, fmt.Sprintf("covers/%s/%d.jpg", sl, n))
			sr.volRatio = append(sr.volRatio, ratio)
			sr.volNSFW = append(sr.volNSFW, nsfw)
			sr.volCreated = append(sr.volCreated, at(i, 6*time.Hour).Add(time.Duration(n)*time.Minute))
		}
		for _, t := range s.tags {
			sr.tagS, sr.tagT = append(sr.tagS, id), append(sr.tagT, must(tagIDs, t))
		}
		for _, p := range s.publishers {
			sr.pubS, sr.pubP = append(sr.pubS, id), append(sr.pubP, must(pubIDs, p))
		}
		for _, c := range s.credits {
			sr.creditS, sr.creditC, sr.creditRole = append(sr.creditS, id), append(sr.creditC, must(contributorIDs, c.contributor)), append(sr.creditRole, c.role)
		}
	}

	if len(missing) > 0 {
		return nil, fmt.Errorf("demo catalog: unknown names %q", missing)
	}

	// Every statement skips rows that exist (ON CONFLICT DO NOTHING, whatever the
	// constraint): a second load changes nothing and keeps what was edited since.
	return []table{
		{name: "clients", sql: `INSERT INTO clients (id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			cols: []any{Client, ClientName}},
		{name: "tags", sql: `INSERT INTO tags (id, client_id, name, type)
			SELECT u.id, $1, u.name, u.type FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(id, name, type)
			ON CONFLICT DO NOTHING`,
			cols: []any{Client, tg.id, tg.name, tg.typs}, lastID: int64(len(tg.id))},
		{name: "publishers", sql: `INSERT INTO publishers (id, client_id, name, short_name, slug, country, website,
				headquarter, founding_date, image, image_source, created_at)
			SELECT u.id, $1, u.name, u.short, u.slug, u.country, u.website, u.hq,
			       nullif(u.founded, '')::date, u.image, u.image_source, u.created
			FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			            $9::text[], $10::text[], $11::text[], $12::timestamptz[])
			     AS u(id, name, short, slug, country, website, hq, founded, image, image_source, created)
			ON CONFLICT DO NOTHING`,
			cols: []any{Client, pb.id, pb.name, pb.short, pb.slug, pb.country, pb.website, pb.hq, pb.founded, pb.image, pb.imageSource, pb.created}, lastID: int64(len(pb.id))},
		{name: "publisher_descriptions", sql: `INSERT INTO publisher_descriptions (id, publisher_id, description, language, source)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{pd.id, pd.pub, pd.text, pd.lang, pd.sources}, lastID: int64(len(pd.id))},
		{name: "publisher_aliases", sql: `INSERT INTO publisher_aliases (id, publisher_id, title, language)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{pa.id, pa.pub, pa.title, pa.lang}, lastID: int64(len(pa.id))},
		{name: "publisher_relations", sql: `INSERT INTO publisher_relations (id, publisher_id, related_id, type)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{pr.id, pr.from, pr.to, pr.typs}, lastID: int64(len(pr.id))},
		{name: "series", sql: `INSERT INTO series (id, client_id, name, slug, type, origin, created_at)
			SELECT u.id, $1, u.name, u.slug, u.type, 'Japan', u.created
			FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS u(id, name, slug, type, created)
			ON CONFLICT DO NOTHING`,
			cols: []any{Client, sr.id, sr.name, sr.slugs, sr.typs, sr.created}, lastID: int64(len(sr.id))},
		{name: "series_aliases", sql: `INSERT INTO series_aliases (id, series_id, title, language)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{sr.aliasID, sr.aliasS, sr.aliasTitle, sr.aliasLang}, lastID: int64(len(sr.aliasID))},
		{name: "series_descriptions", sql: `INSERT INTO series_descriptions (id, series_id, language, description)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{sr.descID, sr.descS, sr.descLang, sr.descText}, lastID: int64(len(sr.descID))},
		{name: "volumes", sql: `INSERT INTO volumes (id, series_id, number, title, cover_path, aspect_ratio, nsfw, nsfw18, created_at)
			SELECT u.id, u.series_id, u.number, u.title, u.cover, u.ratio, u.nsfw, 0, u.created
			FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[], $5::text[], $6::real[], $7::smallint[], $8::timestamptz[])
			     AS u(id, series_id, number, title, cover, ratio, nsfw, created)
			ON CONFLICT DO NOTHING`,
			cols: []any{sr.volID, sr.volS, sr.volNumber, sr.volTitle, sr.volCover, sr.volRatio, sr.volNSFW, sr.volCreated}, lastID: int64(len(sr.volID))},
		{name: "series_tags", sql: `INSERT INTO series_tags (series_id, tag_id)
			SELECT * FROM unnest($1::bigint[], $2::bigint[])
			ON CONFLICT DO NOTHING`,
			cols: []any{sr.tagS, sr.tagT}},
		{name: "series_publishers", sql: `INSERT INTO series_publishers (series_id, publisher_id)
			SELECT * FROM unnest($1::bigint[], $2::bigint[])
			ON CONFLICT DO NOTHING`,
			cols: []any{sr.pubS, sr.pubP}},
		{name: "contributors", sql: `INSERT INTO contributors (id, client_id, first_name, last_name, slug, gender, type, public, created_at)
			SELECT u.id, $1, u.first, u.last, u.slug, u.gender, 'person', true, u.created
			FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
			     AS u(id, first, last, slug, gender, created)
			ON CONFLICT DO NOTHING`,
			cols: []any{Client, ct.id, ct.first, ct.last, ct.slugs, ct.gender, ct.created}, lastID: int64(len(ct.id))},
		{name: "contributor_links", sql: `INSERT INTO contributor_links (id, contributor_id, url)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{ct.linkID, ct.linkC, ct.linkURL}, lastID: int64(len(ct.linkID))},
		{name: "contributor_aliases", sql: `INSERT INTO contributor_aliases (id, contributor_id, title, language)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{ct.aliasID, ct.aliasC, ct.aliasTitle, ct.aliasLang}, lastID: int64(len(ct.aliasID))},
		{name: "contributor_descriptions", sql: `INSERT INTO contributor_descriptions (id, contributor_id, description, language, source)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{ct.descID, ct.descC, ct.descText, ct.descLang, ct.descSource}, lastID: int64(len(ct.descID))},
		{name: "contributor_relations", sql: `INSERT INTO contributor_relations (id, contributor_id, related_id, type)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{ct.relID, ct.relFrom, ct.relTo, ct.relType}, lastID: int64(len(ct.relID))},
		{name: "series_contributors", sql: `INSERT INTO series_contributors (series_id, contributor_id, role)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[])
			ON CONFLICT DO NOTHING`,
			cols: []any{sr.creditS, sr.creditC, sr.creditRole}},
	}, nil
}

// loadCatalog inserts the demo catalog in one round trip and moves the identity
// sequences past its ids.
func loadCatalog(ctx context.Context, tx pgx.Tx) error {
	tables, err := catalogTables()
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	for _, t := range tables {
		b.Queue(t.sql, t.cols...)
	}
	br := tx.SendBatch(ctx, b)
	for _, t := range tables {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("insert demo %s: %w", t.name, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("insert demo catalog: %w", err)
	}
	return advanceSequences(ctx, tx, tables)
}

// advanceSequences moves the identity sequence of each table with fixed ids past both
// its largest id and the largest demo id, never backwards, so rows added later
// (through the API or by Generate) never take an id the demo catalog names.
func advanceSequences(ctx context.Context, tx pgx.Tx, tables []table) error {
	b := &pgx.Batch{}
	var names []string
	for _, t := range tables {
		if t.lastID == 0 {
			continue
		}
		names = append(names, t.name)
		b.Queue(fmt.Sprintf(`
			SELECT setval(seq, target)
			FROM (SELECT pg_get_serial_sequence('%[1]s', 'id')::regclass AS seq,
			             greatest((SELECT coalesce(max(id), 0) FROM %[1]s), $1::bigint) AS target) s
			WHERE target > coalesce(pg_sequence_last_value(seq), 0)`, t.name), t.lastID)
	}
	br := tx.SendBatch(ctx, b)
	for _, name := range names {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("advance the id sequence of %s: %w", name, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("advance id sequences: %w", err)
	}
	return nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
